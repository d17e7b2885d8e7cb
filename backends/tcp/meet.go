package tcp

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// meeting is how the ranks of a launched job learn rank 0's address and
// the job's secret when nobody gave them: rank 0 publishes both once it
// listens, the others wait for them.
type meeting interface {
	// publish is rank 0's side, once its listener is at addr.
	publish(ctx context.Context, addr string, secret []byte, deadline time.Time) error
	// await is every other rank's side.
	await(ctx context.Context, deadline time.Time) (addr string, secret []byte, err error)
	// close releases what publish or await took (rank 0 removes its file).
	close()
}

// meetSpec says where a launched job's ranks meet; it is worked out from
// the environment alone, and opened only when the rank starts.
type meetSpec struct {
	pmiFD string // MPICH/Hydra: the PMI connection; else a board:
	dir   string // the board's directory ("": ours under the temporary directory)
	name  string // the board's file name
	job   string // the job, for messages
}

// open makes the meeting of spec for rank.
func (s meetSpec) open(rank int) (meeting, error) {
	if s.pmiFD != "" {
		return dialPMI(s.pmiFD, rank)
	}
	dir := s.dir
	if dir == "" {
		var err error
		if dir, err = ourTempDir(); err != nil {
			return nil, fmt.Errorf("%s: rendezvous file: %w", s.job, err)
		}
	}
	return newBoard(dir, s.name, s.job)
}

// Launcher names, as launchers lists them.
const (
	openMPI = "mpirun (Open MPI)"
	mpich   = "mpirun (MPICH/Hydra)"
	slurm   = "srun (Slurm)"
)

// launcherName is the name of the launcher whose variables gave the rank.
func launcherName(getenv func(string) string) string {
	for _, l := range launchers {
		if getenv(l.Rank) != "" && getenv(l.Size) != "" {
			return l.Name
		}
	}
	return ""
}

// secretHint says, per launcher, how to hand every rank the same secret.
func secretHint(launcher string) string {
	set := EnvSecret + "=$(openssl rand -hex 16)"
	switch launcher {
	case openMPI:
		return "mpirun -x " + set
	case mpich:
		return "mpiexec -genv " + EnvSecret + " $(openssl rand -hex 16)"
	case slurm:
		return "export " + set + " before srun, which passes it on"
	}
	return "export " + set + " before starting the ranks"
}

// launchSecret is the secret of a job whose rendezvous address was given:
// HCCL_TEST_SECRET, or Open MPI's per-job random key, which mpirun hands
// to the job's processes alone.
func launchSecret(getenv func(string) string, launcher, source string) ([]byte, error) {
	if s := getenv(EnvSecret); s != "" {
		return []byte(s), nil
	}
	if k := getenv("OMPI_MCA_orte_precondition_transports"); launcher == openMPI && k != "" {
		return []byte("ompi-job-key:" + k), nil
	}
	return nil, fmt.Errorf("started by %s: set %s to the same secret on every rank (for example %s)", source, EnvSecret, secretHint(launcher))
}

// deriveMeeting completes r, a rank started by a launcher that gave no
// rendezvous address: with every rank on one host, they meet through a
// file in a directory of the job's (Open MPI, Slurm) or through the
// launcher's key-value space (MPICH); across hosts, Slurm's node list and
// job id give rank 0's address, and where nothing does, the error says
// what to set.
func deriveMeeting(getenv func(string) string, r role, bind string) (role, error) {
	launcher := launcherName(getenv)
	switch launcher {
	case openMPI:
		local, size := getenv("OMPI_COMM_WORLD_LOCAL_SIZE"), getenv("OMPI_COMM_WORLD_SIZE")
		if local != "" && local != size {
			return role{}, fmt.Errorf("started by %s with ranks on several hosts (OMPI_COMM_WORLD_LOCAL_SIZE=%s of OMPI_COMM_WORLD_SIZE=%s), where rank 0's address cannot be found: pass --master HOST:PORT (rank 0's host and a free port, the same on every rank) and --bind IFACE",
				launcher, local, size)
		}
		job := getenv("OMPI_MCA_ess_base_jobid")
		dir := getenv("OMPI_MCA_orte_jobfam_session_dir")
		if job == "" || dir == "" {
			// Open MPI 5 (PRRTE): the PMIx namespace names the job.
			job, dir = getenv("PMIX_NAMESPACE"), ""
		}
		if job == "" {
			return role{}, fmt.Errorf("started by %s, which names no job (neither OMPI_MCA_ess_base_jobid nor PMIX_NAMESPACE): pass --master HOST:PORT and set %s (%s)", r.Source, EnvSecret, secretHint(launcher))
		}
		r.meet = &meetSpec{dir: dir, name: "hccl-test-ompi-" + fileSafe(job), job: "Open MPI job " + job}
	case mpich:
		local, size := getenv("MPI_LOCALNRANKS"), getenv("PMI_SIZE")
		if getenv("PMI_FD") == "" {
			return role{}, fmt.Errorf("started by %s without PMI_FD, so the ranks cannot reach the process manager: pass --master HOST:PORT and set %s (%s)", r.Source, EnvSecret, secretHint(launcher))
		}
		if local != "" && local != size && bind == "" {
			return role{}, fmt.Errorf("started by %s with ranks on several hosts (MPI_LOCALNRANKS=%s of PMI_SIZE=%s): pass --bind IFACE (or an address) so that the ranks listen where the others can reach them", launcher, local, size)
		}
		r.meet = &meetSpec{pmiFD: getenv("PMI_FD"), job: "MPICH job"}
	case slurm:
		return deriveSlurm(getenv, r, bind)
	default:
		return role{}, fmt.Errorf("started by %s, which gives no rendezvous address: pass --master host:port (rank 0's, the same on every rank) or set MASTER_ADDR and MASTER_PORT", r.Source)
	}
	if s := getenv(EnvSecret); s != "" {
		r.Secret = []byte(s)
	}
	return r, nil
}

// deriveSlurm is deriveMeeting under srun: on one node, a file named by
// the job and step; across nodes, the first node of the step at a port
// from the job and step id (slurmPort), with the secret from
// HCCL_TEST_SECRET, which Slurm has no per-job value for.
func deriveSlurm(getenv func(string) string, r role, bind string) (role, error) {
	first := func(names ...string) (string, string) {
		for _, n := range names {
			if v := getenv(n); v != "" {
				return n, v
			}
		}
		return names[0], ""
	}
	_, job := first("SLURM_JOB_ID", "SLURM_JOBID")
	_, step := first("SLURM_STEP_ID", "SLURM_STEPID")
	jobN, err1 := strconv.ParseUint(job, 10, 64)
	stepN, err2 := strconv.ParseUint(step, 10, 64)
	if err1 != nil || err2 != nil {
		return role{}, fmt.Errorf("started by %s without a job and step id (SLURM_JOB_ID=%q SLURM_STEP_ID=%q): pass --master HOST:PORT and set %s (%s)", r.Source, job, step, EnvSecret, secretHint(slurm))
	}
	listVar, list := first("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
	nodesVar, nodes := first("SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES")
	hosts, err := expandHosts(list)
	single := nodes == "1" || (nodes == "" && err == nil && len(hosts) == 1)
	if single {
		name := fmt.Sprintf("hccl-test-slurm-%d.%d", jobN, stepN)
		if c := getenv("SLURM_CLUSTER_NAME"); c != "" {
			name = fmt.Sprintf("hccl-test-slurm-%s-%d.%d", fileSafe(c), jobN, stepN)
		}
		r.meet = &meetSpec{name: name,
			job: fmt.Sprintf("Slurm job %d step %d", jobN, stepN)}
		if s := getenv(EnvSecret); s != "" {
			r.Secret = []byte(s)
		}
		return r, nil
	}
	if err != nil {
		return role{}, fmt.Errorf("started by %s on %s=%s nodes: %s: %w; pass --master HOST:PORT", r.Source, nodesVar, nodes, listVar, err)
	}
	r.Master = net.JoinHostPort(hosts[0], strconv.Itoa(slurmPort(jobN, stepN)))
	var missing []string
	if bind == "" {
		missing = append(missing, "pass --bind IFACE (or an address) so that the ranks listen where the others can reach them")
	}
	if getenv(EnvSecret) == "" {
		missing = append(missing, fmt.Sprintf("set %s to the same secret on every rank (%s)", EnvSecret, secretHint(slurm)))
	}
	if len(missing) > 0 {
		return role{}, fmt.Errorf("started by %s on %s nodes (%s=%s), meeting at %s (the first node, port %d + (job x 32 + step) mod %d): %s",
			slurm, nodes, listVar, list, r.Master, SlurmPortBase, SlurmPortSpan, strings.Join(missing, ", and "))
	}
	r.Secret = []byte(getenv(EnvSecret))
	return r, nil
}

// fileSafe keeps the letters, digits, dots, dashes and underscores of s,
// so that a launcher's value can name a file.
func fileSafe(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
			return c
		}
		return '_'
	}, s)
}

// meet opens r's meeting and completes r: rank 0 gets the secret (from
// HCCL_TEST_SECRET, or a fresh one) and a started func that publishes its
// address; every other rank waits, until timeout, for the address and the
// secret. done releases the meeting (rank 0's file is removed) and must be
// called once the rendezvous is over, whether it succeeded or not.
func meet(ctx context.Context, r *role, timeout time.Duration) (started func(string) error, done func(), err error) {
	m, err := r.meet.open(r.Rank)
	if err != nil {
		return nil, nil, err
	}
	deadline := time.Now().Add(timeout)
	if r.Rank == 0 {
		if len(r.Secret) == 0 {
			r.Secret = newSecret()
		}
		if r.Master == "" {
			r.Master = "127.0.0.1:0"
		}
		return func(addr string) error { return m.publish(ctx, addr, r.Secret, deadline) }, m.close, nil
	}
	addr, secret, err := m.await(ctx, deadline)
	if err != nil {
		m.close()
		return nil, nil, fmt.Errorf("rank %d: %w", r.Rank, err)
	}
	r.Master, r.Secret = addr, secret
	return nil, m.close, nil
}
