package launcher

import (
	"fmt"
	"strconv"
	"strings"
)

// SlurmStep is what srun tells the tasks of a job step.
type SlurmStep struct {
	// Job and Step are the job and step ids.
	Job, Step uint64
	// Nodes is the step's node count, as NodesVar gives it; 0 when no
	// variable does.
	Nodes    int
	NodesVar string
	// Hosts is the step's node list, as ListVar gives it, expanded; nil
	// when no variable does.
	Hosts   []string
	List    string
	ListVar string
	// Cluster is SLURM_CLUSTER_NAME, "" unset.
	Cluster string
}

// readSlurm reads the variables of a Slurm task into s. A task of a step
// has a step id; without one, the variables are those of a job (a batch
// script, an allocation from salloc), whose processes are no ranks: they
// are left unread, and hccl-test -p starts its own world there. With a
// step id, the task's rank, the step's size and the job id must be set,
// and every node count and list that is set must be one.
func readSlurm(getenv func(string) string, s *SlurmStep) (world, error) {
	stepVar, step := first(getenv, "SLURM_STEP_ID", "SLURM_STEPID")
	if step == "" {
		return world{}, nil
	}
	stepN, err := strconv.ParseUint(step, 10, 32)
	if err != nil {
		return world{}, &Error{Var: stepVar, Value: step, Why: "want the step id srun gives its tasks, a whole number"}
	}
	jobVar, job := first(getenv, "SLURM_JOB_ID", "SLURM_JOBID")
	if job == "" {
		return world{}, halfSet(Slurm, stepVar, step, "SLURM_JOB_ID")
	}
	jobN, err := strconv.ParseUint(job, 10, 64)
	if err != nil {
		return world{}, &Error{Var: jobVar, Value: job, Why: "want the job id Slurm gives its tasks, a whole number"}
	}
	sizeVar, size := first(getenv, "SLURM_NTASKS", "SLURM_NPROCS")
	rank := getenv("SLURM_PROCID")
	switch {
	case rank == "":
		return world{}, halfSet(Slurm, stepVar, step, "SLURM_PROCID")
	case size == "":
		return world{}, halfSet(Slurm, "SLURM_PROCID", rank, "SLURM_NTASKS")
	}
	f := family{name: Slurm, rank: "SLURM_PROCID", size: sizeVar, local: "SLURM_NTASKS_PER_NODE"}
	w, err := rankAndSize(f, getenv, rank, size)
	if err != nil {
		return world{}, err
	}
	*s = SlurmStep{Job: jobN, Step: stepN, Cluster: getenv("SLURM_CLUSTER_NAME")}
	for _, n := range []string{"SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"} {
		if v := getenv(n); v != "" {
			nodes, err := number(n, v, 1, MaxSize, "a number of nodes")
			if err != nil {
				return world{}, err
			}
			if s.NodesVar == "" {
				s.Nodes, s.NodesVar = nodes, n
			}
		}
	}
	for _, n := range []string{"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"} {
		if v := getenv(n); v != "" {
			hosts, err := expandHosts(v)
			if err == nil {
				for _, h := range hosts {
					if err = checkHost(n, v, h); err != nil {
						return world{}, err
					}
				}
			}
			if err != nil {
				return world{}, &Error{Var: n, Value: v, Why: err.Error()}
			}
			if s.ListVar == "" {
				s.Hosts, s.List, s.ListVar = hosts, v, n
			}
		}
	}
	if err := slurmLocal(getenv, s, &w); err != nil {
		return world{}, err
	}
	return w, nil
}

// slurmLocal sets w's tasks on this node from what srun gives every
// task: the tasks of each node of the step (SLURM_STEP_TASKS_PER_NODE, or
// SLURM_TASKS_PER_NODE, "2(x3),1": 2 tasks on each of 3 nodes, then 1)
// at this task's node (SLURM_NODEID); or, on a step of one node, all of
// them. SLURM_NTASKS_PER_NODE, a user's request that srun does not
// always set, gives it only where neither does.
func slurmLocal(getenv func(string) string, s *SlurmStep, w *world) error {
	nodeVar := "SLURM_NODEID"
	nodeV := getenv(nodeVar)
	node := -1
	if nodeV != "" {
		var err error
		if node, err = number(nodeVar, nodeV, 0, MaxSize-1, "this task's node, counted from 0"); err != nil {
			return err
		}
	}
	for _, n := range []string{"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"} {
		v := getenv(n)
		if v == "" {
			continue
		}
		counts, err := tasksPerNode(v)
		if err != nil {
			return &Error{Var: n, Value: v, Why: err.Error()}
		}
		switch {
		case node >= len(counts):
			return &Error{Var: nodeVar, Value: nodeV, Why: fmt.Sprintf("want a node of the %s=%s, which has %d, counted from 0", n, v, len(counts))}
		case node >= 0:
			w.local, w.localSource = counts[node], fmt.Sprintf("%s=%s at %s=%d", n, v, nodeVar, node)
		case len(counts) == 1:
			w.local, w.localSource = counts[0], n+"="+v
		default:
			continue
		}
		if w.local < 1 || w.local > w.size {
			return &Error{Var: n, Value: v, Why: fmt.Sprintf("%d tasks on the node of this task (%s), want 1 to the step's %d", w.local, w.localSource, w.size)}
		}
		return nil
	}
	if s.Nodes == 1 && w.localSource == "" {
		w.local, w.localSource = w.size, s.NodesVar+"=1"
	}
	return nil
}

// maxTaskCounts bounds the nodes of a tasks-per-node list, as maxHosts
// bounds a node list.
const maxTaskCounts = maxHosts

// tasksPerNode expands Slurm's tasks-per-node list, "2(x3),1", into one
// count per node: 2 2 2 1.
func tasksPerNode(list string) ([]int, error) {
	var out []int
	for _, item := range strings.Split(list, ",") {
		count, rep, repeated := strings.Cut(item, "(x")
		times := 1
		if repeated {
			r, ok := strings.CutSuffix(rep, ")")
			n, err := strconv.Atoi(r)
			if !ok || err != nil || n < 1 || n > maxTaskCounts {
				return nil, fmt.Errorf("%q: want N or N(xM), M nodes of N tasks, M from 1 to %d", item, maxTaskCounts)
			}
			times = n
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 || n > MaxSize {
			return nil, fmt.Errorf("%q: want a number of tasks from 0 to %d", item, MaxSize)
		}
		if len(out)+times > maxTaskCounts {
			return nil, fmt.Errorf("more than %d nodes", maxTaskCounts)
		}
		for range times {
			out = append(out, n)
		}
	}
	return out, nil
}

// first returns the first of names that getenv has, and its value; the
// first name and "" when none.
func first(getenv func(string) string, names ...string) (string, string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return n, v
		}
	}
	return names[0], ""
}
