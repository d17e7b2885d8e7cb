module github.com/hccl-test/hccl-test

go 1.26.0

require (
	github.com/montanaflynn/stats v0.14.0
	github.com/spf13/pflag v1.1.0
	github.com/x448/float16 v0.8.4
	go.uber.org/goleak v1.3.0
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da
	golang.org/x/sync v0.25.0
	golang.org/x/sys v0.50.0
)

require github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
