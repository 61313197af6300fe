package kit

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Cmd is one command of a call or batch, its key already chosen (INCR: the incr key).
type Cmd struct {
	Op  Op
	Key string
}

// Conn sends one worker's commands through the library.
type Conn interface {
	// Do sends one command and waits for its reply (pipeline 1, no transaction).
	Do(c Cmd) error
	// Batch sends cmds in one round trip (MULTI … EXEC when tx) and fills errs[i] per command.
	Batch(cmds []Cmd, tx bool, errs []error)
}

// Driver is what a harness supplies: its library's connections.
type Driver interface {
	// Conn is worker w's connection (shared or its own, as the model asks).
	Conn(w int) Conn
	Close()
}

// Client names the harness in the result.
type Client struct{ Name, Library, Module string }

// Workload is the spec with its keys and value built once, before any loop runs.
type Workload struct {
	*Spec
	KeyNames, IncrNames []string
	Value               string
	ops                 []Op
	cum                 []float64
}

func newWorkload(s *Spec) *Workload {
	w := &Workload{Spec: s, KeyNames: make([]string, s.Keys.Count)}
	for i := range w.KeyNames {
		w.KeyNames[i] = s.Keys.Prefix + strconv.Itoa(i)
	}
	total := 0.0
	for _, c := range s.Commands {
		op, _ := ParseOp(c.Command)
		total += c.Ratio
		w.ops = append(w.ops, op)
		w.cum = append(w.cum, total)
		if op == INCR && w.IncrNames == nil {
			w.IncrNames = make([]string, s.Keys.Count)
			for i := range w.IncrNames {
				w.IncrNames[i] = s.Keys.Prefix + "incr:" + strconv.Itoa(i)
			}
		}
	}
	b := make([]byte, s.ValueSize)
	for i := range b {
		b[i] = 'x'
	}
	w.Value = string(b)
	return w
}

// Main runs the harness: spec → driver → workers → result on stdout. It never returns.
func Main(client Client, open func(w *Workload) (Driver, error)) {
	if len(os.Args) != 2 {
		fail(2, "usage: harness SPEC.json")
	}
	spec, err := LoadSpec(os.Args[1])
	if err != nil {
		fail(2, err.Error())
	}
	wl := newWorkload(spec)
	driver, err := open(wl)
	var refusal Refusal
	if errors.As(err, &refusal) {
		fail(2, refusal.Error())
	} else if err != nil {
		fail(1, fmt.Sprintf("cannot reach %s: %v", spec.Endpoint.Addr(), err))
	}
	defer driver.Close()
	res := run(wl, driver)
	res.Client = clientInfo(client)
	out, _ := json.Marshal(res)
	os.Stdout.Write(append(out, '\n'))
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(code)
}

func clientInfo(c Client) map[string]string {
	version := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == c.Module {
				version = strings.TrimPrefix(dep.Version, "v")
			}
		}
	}
	return map[string]string{"name": c.Name, "library": c.Library, "version": version,
		"language": "go", "runtime": runtime.Version()}
}

// ---------------------------------------------------------------- the per-worker loop

type worker struct {
	wl       *Workload
	conn     Conn
	rng      *rand.Rand
	seq      int
	random   bool
	batch    []Cmd
	errs     []error
	hist     [nOps]*hdr.Histogram
	ops      [nOps]int64
	failed   [nOps]int64
	perBatch [nOps]int64
	warm     [nOps]int64
	warmTx   int64
	passing  bool // the allocation pass: its calls counted apart from warmup's
	pass     [nOps]int64
	passTx   int64
	tx       int64
	firstErr error
	end      time.Time
	pace     *pace // the open loop's schedule (nil: closed loop)
}

// pace is an open-loop worker's schedule: its batches' intended send times, gap apart on
// average (rps / workers commands per second in batches of pipeline), uniform or Poisson.
type pace struct {
	gap     float64 // nanoseconds
	poisson bool
	rng     *rand.Rand
	next    time.Time
}

// sleepUntil blocks its thread in nanosleep(2) until t: time.Sleep's timers wake up to a
// millisecond late (the netpoller's epoll timeout), which an open loop would count as latency.
func sleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		ts := syscall.NsecToTimespec(int64(d))
		_ = syscall.Nanosleep(&ts, nil)
	}
}

// take returns the next batch's intended send time and moves the schedule on.
func (p *pace) take() time.Time {
	due := p.next
	gap := p.gap
	if p.poisson {
		gap = p.rng.ExpFloat64() * p.gap
	}
	p.next = p.next.Add(time.Duration(gap))
	return due
}

func newWorker(wl *Workload, conn Conn, idx int) *worker {
	w := &worker{wl: wl, conn: conn, seq: idx % wl.Keys.Count, random: wl.Keys.Pattern == "random",
		rng:   rand.New(rand.NewPCG(uint64(wl.Seed+int64(idx)), 0x6b7670657266)),
		batch: make([]Cmd, wl.Pipeline), errs: make([]error, wl.Pipeline)}
	for i := range w.hist {
		w.hist[i] = hdr.New(1, 60_000_000, 3)
	}
	if r := wl.Rate; r != nil {
		w.pace = &pace{gap: float64(wl.Concurrency.Workers*wl.Pipeline) / r.RPS * 1e9,
			poisson: r.Arrivals == "poisson", next: time.Now(),
			rng: rand.New(rand.NewPCG(uint64(wl.Seed*7919+int64(idx)), 0x70616365))}
	}
	return w
}

func (w *worker) next() Cmd {
	u := w.rng.Float64() * w.wl.cum[len(w.wl.cum)-1]
	op := w.wl.ops[len(w.wl.ops)-1]
	for i, c := range w.wl.cum {
		if u < c {
			op = w.wl.ops[i]
			break
		}
	}
	var i int
	if w.random {
		i = w.rng.IntN(w.wl.Keys.Count)
	} else {
		i = w.seq
		w.seq = (w.seq + w.wl.Concurrency.Workers) % w.wl.Keys.Count
	}
	if op == INCR {
		return Cmd{op, w.wl.IncrNames[i]}
	}
	return Cmd{op, w.wl.KeyNames[i]}
}

//go:noinline
func noop(Cmd) error { return nil }

// stall: a call that fails after this long means the server stopped answering (the libraries'
// read timeouts are 10 s); the harness exits 1 rather than time out once per remaining request.
const stall = 5 * time.Second

func (w *worker) checkStall(n int64) {
	for _, err := range w.errs[:n] {
		if err != nil && !w.wl.Noop {
			fail(1, fmt.Sprintf("server %s stopped answering: %v", w.wl.Endpoint.Addr(), err))
		}
	}
}

// phase runs until deadline (if not zero) or limit commands (if >= 0).
func (w *worker) phase(measure bool, deadline time.Time, limit int64) {
	p, tx, single := int64(w.wl.Pipeline), w.wl.Transaction, w.wl.Pipeline == 1 && !w.wl.Transaction
	for done := int64(0); limit < 0 || done < limit; {
		n := p
		if limit >= 0 && limit-done < n {
			n = limit - done
		}
		cmds := w.batch[:n]
		for j := range cmds {
			cmds[j] = w.next()
		}
		var due time.Time
		if w.pace != nil && !w.passing { // the allocation pass is never paced
			due = w.pace.take()
			sleepUntil(due)
		}
		t0 := time.Now()
		switch {
		case w.wl.Noop:
			w.errs[0] = noop(cmds[0])
		case single:
			w.errs[0] = w.conn.Do(cmds[0])
		default:
			w.conn.Batch(cmds, tx, w.errs[:n])
		}
		t1 := time.Now()
		if t1.Sub(t0) >= stall {
			w.checkStall(n)
		}
		done += n
		if measure {
			if !due.IsZero() {
				t0 = due // open loop: from the intended send time
			}
			w.record(cmds, t1.Sub(t0))
			w.end = t1
		} else {
			w.countWarmup(cmds)
		}
		if !deadline.IsZero() && !t1.Before(deadline) {
			break
		}
	}
}

func (w *worker) record(cmds []Cmd, d time.Duration) {
	us := d.Microseconds()
	if us < 1 {
		us = 1
	}
	if w.wl.Transaction {
		w.tx++
	}
	for j, c := range cmds {
		if err := w.errs[j]; err != nil && !w.wl.Noop {
			w.failed[c.Op]++
			if w.firstErr == nil {
				w.firstErr = err
			}
			continue
		}
		w.perBatch[c.Op]++
	}
	for op, n := range w.perBatch {
		if n > 0 {
			w.ops[op] += n
			w.hist[op].RecordValues(us, n)
			w.perBatch[op] = 0
		}
	}
}

func (w *worker) countWarmup(cmds []Cmd) {
	counts, tx := &w.warm, &w.warmTx
	if w.passing {
		counts, tx = &w.pass, &w.passTx
	}
	for _, c := range cmds {
		counts[c.Op]++
	}
	if w.wl.Transaction {
		*tx++
	}
}

// ---------------------------------------------------------------- running all workers

type result struct {
	Format       string            `json:"format"`
	Version      int               `json:"version"`
	Client       map[string]string `json:"client"`
	DurationS    float64           `json:"duration_s"`
	Warmup       map[string]int64  `json:"warmup"`
	Commands     map[string]any    `json:"commands"`
	Transactions int64             `json:"transactions"`
	FirstError   *string           `json:"first_error"`
	Allocations  map[string]any    `json:"allocations"`
	CPU          map[string]any    `json:"cpu,omitempty"`
	Rate         *Rate             `json:"rate,omitempty"`
}

// processCPU is the process's user and system CPU seconds so far (every thread).
func processCPU() (float64, float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return float64(ru.Utime.Nano()) / 1e9, float64(ru.Stime.Nano()) / 1e9
}

func run(wl *Workload, d Driver) *result {
	n := wl.Concurrency.Workers
	workers := make([]*worker, n)
	for i := range workers {
		workers[i] = newWorker(wl, d.Conn(i), i)
	}
	start := time.Now()
	warmEnd := start.Add(time.Duration(wl.WarmupS * float64(time.Second)))
	var measureEnd time.Time
	if wl.DurationS != nil {
		measureEnd = warmEnd.Add(time.Duration(*wl.DurationS * float64(time.Second)))
	}
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func(i int, w *worker) {
			defer wg.Done()
			if wl.WarmupS > 0 {
				w.phase(false, warmEnd, -1)
			}
			w.phase(true, measureEnd, share(wl.Requests, n, i))
		}(i, w)
	}
	time.Sleep(time.Until(warmEnd))
	user0, sys0 := processCPU() // the measured window's start: warmup's end
	wg.Wait()
	user1, sys1 := processCPU() // … and its end: the last worker done
	res := merge(wl, workers, warmEnd)
	res.CPU = map[string]any{"user_s": max(user1-user0, 0), "system_s": max(sys1-sys0, 0),
		"source": "getrusage(RUSAGE_SELF): every thread, from warmup's end to the last worker's"}
	res.Allocations = allocationPass(wl, workers)
	res.Rate = wl.Rate
	return res
}

// allocationPass runs AllocationOps more operations after the measured window (untimed, the
// same workers and model) between two reads of runtime.MemStats.TotalAlloc: the heap bytes
// allocated per operation, every goroutine's (the library's own included).
func allocationPass(wl *Workload, workers []*worker) map[string]any {
	ops := int64(DefaultAllocationOps)
	if wl.AllocationOps != nil {
		ops = *wl.AllocationOps
	}
	var before, after runtime.MemStats
	var wg sync.WaitGroup
	runtime.ReadMemStats(&before)
	for i, w := range workers {
		w.passing = true
		wg.Add(1)
		go func(i int, w *worker) {
			defer wg.Done()
			w.phase(false, time.Time{}, share(&ops, len(workers), i))
		}(i, w)
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	calls := map[string]int64{}
	for _, w := range workers {
		for _, c := range wl.Commands {
			op, _ := ParseOp(c.Command)
			calls[op.String()] += w.pass[op]
		}
		if wl.Transaction {
			calls["MULTI"] += w.passTx
			calls["EXEC"] += w.passTx
		}
	}
	return map[string]any{"bytes_per_op": float64(after.TotalAlloc-before.TotalAlloc) / float64(ops),
		"ops": ops, "calls": calls, "exact": true,
		"method": "runtime.MemStats.TotalAlloc over an untimed pass after the measured window: " +
			"heap bytes, every goroutine's"}
}

func share(requests *int64, n, i int) int64 {
	if requests == nil {
		return -1
	}
	s := *requests / int64(n)
	if int64(i) < *requests%int64(n) {
		s++
	}
	return s
}

func merge(wl *Workload, workers []*worker, measureStart time.Time) *result {
	res := &result{Format: "kvperf-client-result", Version: 1,
		Warmup: map[string]int64{}, Commands: map[string]any{}}
	end := measureStart
	for _, c := range wl.Commands {
		op, _ := ParseOp(c.Command)
		h := hdr.New(1, 60_000_000, 3)
		var ops, failed, warm int64
		for _, w := range workers {
			h.Merge(w.hist[op])
			ops, failed, warm = ops+w.ops[op], failed+w.failed[op], warm+w.warm[op]
		}
		enc, _ := h.Encode(hdr.V2CompressedEncodingCookieBase)
		res.Commands[op.String()] = map[string]any{"ops": ops, "errors": failed, "histogram": string(enc)}
		res.Warmup[op.String()] = warm
	}
	var warmTx int64
	for _, w := range workers {
		res.Transactions += w.tx
		warmTx += w.warmTx
		if w.end.After(end) {
			end = w.end
		}
		if w.firstErr != nil && res.FirstError == nil {
			msg := w.firstErr.Error()
			res.FirstError = &msg
		}
	}
	res.Warmup["MULTI"], res.Warmup["EXEC"] = warmTx, warmTx
	res.DurationS = end.Sub(measureStart).Seconds()
	return res
}
