package plot_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hccl-test/hccl-test/results/plot"
)

// A CSV from `hccl-test --csv` with two runs of one row (--runs 2): the
// point is the run with the lower of the two times, a value measured, and the image is drawn as PNG.
func Example() {
	dir, err := os.MkdirTemp("", "plot-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	csv := filepath.Join(dir, "run.csv")
	rows := "schema_version,backend,ranks,algo_requested,link_GBps,op,dtype,redop,in_place,size_bytes,time_us,busbw_GBps,run\n" +
		"1,shm,8,auto,25,allreduce,fp16,sum,false,1048576,100,18.35,1\n" +
		"1,shm,8,auto,25,allreduce,fp16,sum,false,1048576,120,15.29,2\n"
	if err := os.WriteFile(csv, []byte(rows), 0o644); err != nil {
		log.Fatal(err)
	}

	d, err := plot.Load(csv)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s; link %g GB/s\n", d.Title, d.LinkGBps)
	for _, s := range d.Series {
		for _, p := range s.Points {
			fmt.Printf("%s: %d bytes, %.0f µs, %.2f GB/s over %d runs\n", s.Label, p.Bytes, p.TimeUS, p.BusBW, p.Rows)
		}
	}
	if err := plot.Write(d, filepath.Join(dir, "busbw.png")); err != nil {
		log.Fatal(err)
	}
	// Output:
	// fp16, shm, 8 ranks, algo auto; link 25 GB/s
	// allreduce: 1048576 bytes, 100 µs, 18.35 GB/s over 2 runs
}
