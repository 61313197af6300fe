// Package kit is the library-independent part of kvperf's Go client harnesses (contract v1,
// issue 23): the workload spec, the per-worker loop with its histograms, and the result JSON.
// A harness supplies a Driver (how its library sends one command or one batch).
package kit

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
)

// Op is one command of the v1 vocabulary.
type Op uint8

const (
	SET Op = iota
	GET
	INCR
	nOps
)

var opNames = [nOps]string{"SET", "GET", "INCR"}

func (o Op) String() string { return opNames[o] }

// Endpoint is the spec's server address and TLS files.
type Endpoint struct {
	Host     string  `json:"host"`
	Port     int     `json:"port"`
	TLS      bool    `json:"tls"`
	CAFile   *string `json:"ca_file"`
	CertFile *string `json:"cert_file"`
	KeyFile  *string `json:"key_file"`
}

// Spec is a kvperf-client-workload v1 document.
type Spec struct {
	Format   string   `json:"format"`
	Version  int      `json:"version"`
	Endpoint Endpoint `json:"endpoint"`
	Commands []struct {
		Command string  `json:"command"`
		Ratio   float64 `json:"ratio"`
	} `json:"commands"`
	Keys struct {
		Prefix  string `json:"prefix"`
		Count   int    `json:"count"`
		Pattern string `json:"pattern"`
	} `json:"keys"`
	ValueSize   int  `json:"value_size"`
	Pipeline    int  `json:"pipeline"`
	Transaction bool `json:"transaction"`
	Concurrency struct {
		Model   string `json:"model"`
		Workers int    `json:"workers"`
	} `json:"concurrency"`
	Requests  *int64   `json:"requests"`
	DurationS *float64 `json:"duration_s"`
	WarmupS   float64  `json:"warmup_s"`
	Seed      int64    `json:"seed"`
	Noop      bool     `json:"noop"`
	// Rate: the open loop (nil: closed loop).
	Rate *Rate `json:"rate"`
	// AllocationOps: the untimed allocation pass's operations (absent: DefaultAllocationOps).
	AllocationOps *int64 `json:"allocation_ops"`
}

// Rate is the spec's open loop: rps commands per second over all workers, batches sent at
// intended times (uniform gaps or Poisson arrivals), latency from the intended time.
type Rate struct {
	RPS      float64 `json:"rps"`
	Arrivals string  `json:"arrivals"`
}

// DefaultAllocationOps is the allocation pass's size when the spec does not say.
const DefaultAllocationOps = 1000

// Refusal is a spec the harness cannot honour (exit 2).
type Refusal struct{ msg string }

func (r Refusal) Error() string { return r.msg }

// Refuse builds a Refusal with a formatted message.
func Refuse(format string, args ...any) error { return Refusal{fmt.Sprintf(format, args...)} }

// LoadSpec reads and validates the spec file.
func LoadSpec(path string) (*Spec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, Refuse("cannot read spec: %v", err)
	}
	var s Spec
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, Refuse("spec is not valid JSON: %v", err)
	}
	return &s, s.validate()
}

func (s *Spec) validate() error {
	switch {
	case s.Format != "kvperf-client-workload" || s.Version != 1:
		return Refuse("unsupported spec format %q version %d", s.Format, s.Version)
	case len(s.Commands) == 0:
		return Refuse("spec has no commands")
	case s.Keys.Count < 1:
		return Refuse("keys.count must be >= 1")
	case s.Keys.Pattern != "random" && s.Keys.Pattern != "sequential":
		return Refuse("unknown key pattern %q", s.Keys.Pattern)
	case s.Pipeline < 1:
		return Refuse("pipeline must be >= 1")
	case s.Concurrency.Workers < 1:
		return Refuse("concurrency.workers must be >= 1")
	case (s.Requests == nil) == (s.DurationS == nil):
		return Refuse("exactly one of requests and duration_s must be set")
	case s.Concurrency.Model == "single" && s.Concurrency.Workers != 1:
		return Refuse("concurrency model single needs workers = 1")
	case s.AllocationOps != nil && *s.AllocationOps < 1:
		return Refuse("allocation_ops must be >= 1")
	case s.Rate != nil && (!(s.Rate.RPS > 0) || (s.Rate.Arrivals != "uniform" && s.Rate.Arrivals != "poisson")):
		return Refuse("rate must be {\"rps\": > 0, \"arrivals\": \"uniform\" or \"poisson\"}")
	}
	for _, c := range s.Commands {
		if _, err := ParseOp(c.Command); err != nil {
			return err
		}
		if c.Ratio < 0 {
			return Refuse("negative ratio for %s", c.Command)
		}
	}
	return nil
}

// ParseOp maps a command name to an Op.
func ParseOp(name string) (Op, error) {
	for i, n := range opNames {
		if n == name {
			return Op(i), nil
		}
	}
	return 0, Refuse("command %s is not in the v1 vocabulary (SET, GET, INCR)", name)
}

// Password is the server password from the environment, "" when none.
func Password() string { return os.Getenv("KVPERF_CLIENT_PASSWORD") }

// TLSConfig builds the client TLS configuration, nil when the endpoint is plain TCP.
func (e Endpoint) TLSConfig() (*tls.Config, error) {
	if !e.TLS {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: e.Host}
	if e.CAFile != nil {
		pem, err := os.ReadFile(*e.CAFile)
		if err != nil {
			return nil, Refuse("cannot read ca_file: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		cfg.RootCAs.AppendCertsFromPEM(pem)
	}
	if e.CertFile != nil && e.KeyFile != nil {
		cert, err := tls.LoadX509KeyPair(*e.CertFile, *e.KeyFile)
		if err != nil {
			return nil, Refuse("cannot load cert_file/key_file: %v", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Addr is host:port.
func (e Endpoint) Addr() string { return fmt.Sprintf("%s:%d", e.Host, e.Port) }
