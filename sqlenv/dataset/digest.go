package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// Digests identify what an environment serves, so that a trainer can check
// that remote environment servers play exactly its questions on exactly its
// databases before it trusts their rewards.

// DatabaseDigest is the SHA-256 of a database file's bytes, in hex.
func DatabaseDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("database digest: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("database digest of %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Digest identifies a question as an environment plays it: the SHA-256 (hex)
// of its id, text, database name, gold SQL, gold answer, answer type and the
// digest of its database file. Two environments that agree on a question's
// digest give the same observations and rewards for the same actions.
// Difficulty, tables and split do not take part (they do not change play).
func (q QuestionRecord) Digest(databaseDigest string) string {
	b, _ := json.Marshal([]string{q.QuestionID, q.QuestionText, q.DatabaseName, q.GoldSQL,
		string(q.GoldAnswer), string(q.AnswerType), databaseDigest})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// DigestCache computes database digests once per path.
type DigestCache struct {
	mu   sync.Mutex
	done map[string]string
}

// Database returns the digest of the database file at path.
func (c *DigestCache) Database(path string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.done[path]; ok {
		return d, nil
	}
	d, err := DatabaseDigest(path)
	if err != nil {
		return "", err
	}
	if c.done == nil {
		c.done = map[string]string{}
	}
	c.done[path] = d
	return d, nil
}

// Digests returns the digest of each question (by id), its database found
// at dbPath(database name).
func (c *DigestCache) Digests(qs []QuestionRecord, dbPath func(database string) string) (map[string]string, error) {
	out := make(map[string]string, len(qs))
	for _, q := range qs {
		db, err := c.Database(dbPath(q.DatabaseName))
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", q.QuestionID, err)
		}
		out[q.QuestionID] = q.Digest(db)
	}
	return out, nil
}
