module github.com/hccl-test/hccl-test

go 1.26.0

require (
	github.com/montanaflynn/stats v0.14.0
	github.com/spf13/pflag v1.1.0
	github.com/x448/float16 v0.8.4
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.25.0
	golang.org/x/sys v0.50.0
)
