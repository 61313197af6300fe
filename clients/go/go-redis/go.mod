module kvperf/clients/go-redis

go 1.26.0

require (
	github.com/redis/go-redis/v9 v9.23.0
	kvperf/clients/kit v0.0.0
)

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace kvperf/clients/kit => ../kit
