package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/gosqlenv/gosqlenv/sqlenv/internal/protocol"
)

// TestWriteAfterRefusalReportsTheServersReason: a server that refuses a
// session sends its error message and closes (as OpenEnv's does). A client
// whose first write comes after that close must still report the server's
// refusal (CAPACITY_REACHED), not the failed write: the order is forced
// here by waiting for the read loop to end before writing.
func TestWriteAfterRefusalReportsTheServersReason(t *testing.T) {
	for _, withMessage := range []bool{true, false} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			conn, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			if withMessage {
				conn.Write(r.Context(), websocket.MessageText,
					[]byte(`{"type":"error","data":{"code":"CAPACITY_REACHED","message":"this client already has 3 sessions"}}`))
			}
			conn.Close(websocket.StatusTryAgainLater, string(protocol.CodeCapacity))
		}))
		ctx := context.Background()
		conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &Session{addr: hs.URL, opts: (*Options)(nil).withDefaults(), conn: conn, replies: make(chan []byte, 1), done: make(chan struct{})}
		go c.read()
		<-c.done // the server's message and close have been read
		_, err = c.call(ctx, protocol.Envelope{Type: "state"})
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != protocol.CodeCapacity {
			t.Errorf("error message sent first: %v; got %v, want the server's %s", withMessage, err, protocol.CodeCapacity)
		}
		hs.Close()
	}
}
