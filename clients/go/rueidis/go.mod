module kvperf/clients/rueidis

go 1.25.0

require (
	github.com/redis/rueidis v1.0.79
	kvperf/clients/kit v0.0.0
)

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

replace kvperf/clients/kit => ../kit
