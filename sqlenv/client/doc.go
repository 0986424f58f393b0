// Package client provides Go clients of the environment server
// (sqlenv/server, `sqlenv-server`): each makes a remote session look like
// an in-process sqlenv.Env, with the observations, rewards and metadata the
// server's environment made.
//
// Dial opens a session over a WebSocket (one connection per session, the
// fastest); NewHTTPSession over the stateful HTTP extension (through
// proxies that do not pass WebSockets). A Pool spreads sessions over
// several servers in turn and tries the others when one is down or full;
// its NewEnv fits training.NewRoller. CheckServer tells whether a server
// plays a local configuration's questions, databases and rules, before a
// trainer trusts its rewards.
//
// The package depends on the protocol and a WebSocket library only, not on
// the server's (metrics, OpenAPI), so that programs that only play remote
// episodes stay small.
package client
