// kvperf client harness for rueidis (contract v1, issue 23).
// Models: single (one goroutine, one connection), async (workers goroutines sharing one
// auto-pipelined connection: rueidis's natural mode) and pool (DisableAutoPipelining: each call
// takes a connection from a pool of workers connections).
package main

import (
	"context"
	"net"
	"time"

	"github.com/redis/rueidis"
	"kvperf/clients/kit"
)

var ctx = context.Background()

type driver struct {
	client rueidis.Client
	value  string
}

type conn struct {
	d    *driver
	cmds rueidis.Commands
}

func open(wl *kit.Workload) (kit.Driver, error) {
	model, workers := wl.Concurrency.Model, wl.Concurrency.Workers
	if model != "single" && model != "pool" && model != "async" {
		return nil, kit.Refuse("concurrency model %s is not supported by rueidis", model)
	}
	tlsCfg, err := wl.Endpoint.TLSConfig()
	if err != nil {
		return nil, err
	}
	client, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{wl.Endpoint.Addr()}, Password: kit.Password(), TLSConfig: tlsCfg,
		ForceSingleClient: true, PipelineMultiplex: -1, DisableCache: true, DisableRetry: true,
		DisableAutoPipelining: model == "pool", BlockingPoolSize: workers,
		Dialer: net.Dialer{Timeout: 5 * time.Second}, ConnWriteTimeout: 10 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	return &driver{client: client, value: wl.Value}, nil
}

func (d *driver) Conn(int) kit.Conn { return &conn{d: d} }

func (d *driver) Close() { d.client.Close() }

func replyErr(err error) error {
	if rueidis.IsRedisNil(err) {
		return nil
	}
	return err
}

func (c *conn) build(cmd kit.Cmd) rueidis.Completed {
	b := c.d.client.B()
	switch cmd.Op {
	case kit.SET:
		return b.Set().Key(cmd.Key).Value(c.d.value).Build()
	case kit.GET:
		return b.Get().Key(cmd.Key).Build()
	default:
		return b.Incr().Key(cmd.Key).Build()
	}
}

func (c *conn) Do(cmd kit.Cmd) error {
	return replyErr(c.d.client.Do(ctx, c.build(cmd)).Error())
}

func (c *conn) Batch(cmds []kit.Cmd, tx bool, errs []error) {
	c.cmds = c.cmds[:0]
	if tx {
		c.cmds = append(c.cmds, c.d.client.B().Multi().Build())
	}
	for _, cmd := range cmds {
		c.cmds = append(c.cmds, c.build(cmd))
	}
	if tx {
		c.cmds = append(c.cmds, c.d.client.B().Exec().Build())
	}
	results := c.d.client.DoMulti(ctx, c.cmds...)
	if !tx {
		for i, r := range results {
			errs[i] = replyErr(r.Error())
		}
		return
	}
	replies, err := results[len(results)-1].ToArray()
	for i := range cmds {
		switch {
		case err != nil:
			errs[i] = err
		case i < len(replies):
			errs[i] = replyErr(replies[i].Error())
		default:
			errs[i] = rueidis.ErrClosing
		}
	}
}

func main() {
	kit.Main(kit.Client{Name: "rueidis", Library: "rueidis", Module: "github.com/redis/rueidis"}, open)
}
