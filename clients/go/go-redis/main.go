// kvperf client harness for go-redis v9 (contract v1, issue 23).
// Models: single (PoolSize 1) and pool (workers goroutines sharing a PoolSize=workers pool);
// go-redis has no multiplexed connection, so async is refused.
package main

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
	"kvperf/clients/kit"
)

var ctx = context.Background()

type driver struct {
	client *redis.Client
	value  string
}

type conn struct {
	d        *driver
	pipe, tx redis.Pipeliner
	cmds     []redis.Cmder
}

func open(wl *kit.Workload) (kit.Driver, error) {
	model, workers := wl.Concurrency.Model, wl.Concurrency.Workers
	if model != "single" && model != "pool" {
		return nil, kit.Refuse("concurrency model %s is not supported by go-redis", model)
	}
	tlsCfg, err := wl.Endpoint.TLSConfig()
	if err != nil {
		return nil, err
	}
	client := redis.NewClient(&redis.Options{
		Addr: wl.Endpoint.Addr(), Password: kit.Password(), TLSConfig: tlsCfg,
		PoolSize: workers, MinIdleConns: workers, MaxRetries: -1,
		DialTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second,
		DisableIdentity: true,
	})
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, err
	}
	return &driver{client: client, value: wl.Value}, nil
}

func (d *driver) Conn(int) kit.Conn {
	return &conn{d: d, pipe: d.client.Pipeline(), tx: d.client.TxPipeline()}
}

func (d *driver) Close() { d.client.Close() }

func replyErr(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

func (c *conn) Do(cmd kit.Cmd) error {
	switch cmd.Op {
	case kit.SET:
		return c.d.client.Set(ctx, cmd.Key, c.d.value, 0).Err()
	case kit.GET:
		return replyErr(c.d.client.Get(ctx, cmd.Key).Err())
	default:
		return c.d.client.Incr(ctx, cmd.Key).Err()
	}
}

func (c *conn) Batch(cmds []kit.Cmd, tx bool, errs []error) {
	p := c.pipe
	if tx {
		p = c.tx
	}
	c.cmds = c.cmds[:0]
	for _, cmd := range cmds {
		switch cmd.Op {
		case kit.SET:
			c.cmds = append(c.cmds, p.Set(ctx, cmd.Key, c.d.value, 0))
		case kit.GET:
			c.cmds = append(c.cmds, p.Get(ctx, cmd.Key))
		default:
			c.cmds = append(c.cmds, p.Incr(ctx, cmd.Key))
		}
	}
	p.Exec(ctx)
	for i, r := range c.cmds {
		errs[i] = replyErr(r.Err())
	}
}

// quiet drops go-redis's own log lines (dial retries…): the harness reports failures itself.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...interface{}) {}

func main() {
	redis.SetLogger(quiet{})
	kit.Main(kit.Client{Name: "go-redis", Library: "go-redis", Module: "github.com/redis/go-redis/v9"}, open)
}
