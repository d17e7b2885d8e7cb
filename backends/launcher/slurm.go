package launcher

import "strconv"

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
	return w, nil
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
