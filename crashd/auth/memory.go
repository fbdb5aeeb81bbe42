package auth

import (
	"context"
	"sync"
	"time"
)

// MaxMemorySessions bounds the sessions a Memory keeps (the one nearest
// its end goes first).
const MaxMemorySessions = 10000

// Memory is a Store in this process's memory: the sessions of a crashd
// without a shared store (and tests). It keeps no tokens unless PutToken
// adds them.
type Memory struct {
	mu       sync.Mutex
	tokens   map[string]Token
	sessions map[string]Session
	now      func() time.Time
}

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{tokens: map[string]Token{}, sessions: map[string]Session{}, now: time.Now}
}

// PutToken keeps t (replacing a token of the same hash).
func (m *Memory) PutToken(t Token) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens[t.SHA256] = t
}

// RevokeToken forgets the token named name and ends its sessions.
func (m *Memory) RevokeToken(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, t := range m.tokens {
		if t.Name == name {
			delete(m.tokens, h)
		}
	}
	for id, s := range m.sessions {
		if s.Token == name {
			delete(m.sessions, id)
		}
	}
}

// TokenByHash implements [Store].
func (m *Memory) TokenByHash(_ context.Context, sha256Hex string) (Token, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[sha256Hex]
	return t, ok && t.Valid(m.now()), nil
}

// PutSession implements [Store].
func (m *Memory) PutSession(_ context.Context, s Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if len(m.sessions) >= MaxMemorySessions {
		var first *Session
		for id, o := range m.sessions {
			if !now.Before(o.Expires) {
				delete(m.sessions, id)
			} else if first == nil || o.Expires.Before(first.Expires) {
				first = &o
			}
		}
		if len(m.sessions) >= MaxMemorySessions && first != nil {
			delete(m.sessions, first.ID)
		}
	}
	m.sessions[s.ID] = s
	return nil
}

// SessionByID implements [Store].
func (m *Memory) SessionByID(_ context.Context, id string) (Session, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if ok && !m.now().Before(s.Expires) {
		delete(m.sessions, id)
		return Session{}, false, nil
	}
	return s, ok, nil
}

// DeleteSession implements [Store].
func (m *Memory) DeleteSession(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}
