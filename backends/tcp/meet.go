package tcp

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/hccl-test/hccl-test/backends/launcher"
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
	pmiFD int    // MPICH/Hydra: the PMI connection (PMI_FD, at least 3); 0: a board:
	dir   string // the board's directory ("": ours under the temporary directory)
	name  string // the board's file name
	job   string // the job, for messages
}

// open makes the meeting of spec for rank.
func (s meetSpec) open(rank int) (meeting, error) {
	if s.pmiFD > 0 {
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

// secretHint says, per launcher, how to hand every rank the same secret.
func secretHint(f launcher.Family) string {
	set := EnvSecret + "=$(openssl rand -hex 16)"
	switch f {
	case launcher.OpenMPI:
		return "mpirun -x " + set
	case launcher.MPICH:
		return "mpiexec -genv " + EnvSecret + " $(openssl rand -hex 16)"
	case launcher.Slurm:
		return "export " + set + " before srun, which passes it on"
	}
	return "export " + set + " before starting the ranks"
}

// launchSecret is the secret of a job whose rendezvous address was given:
// HCCL_TEST_SECRET, or Open MPI's per-job random key, which mpirun hands
// to the job's processes alone.
func launchSecret(env launcher.Env) ([]byte, error) {
	if env.Secret != "" {
		return []byte(env.Secret), nil
	}
	if k := env.OpenMPI.Key; env.Family == launcher.OpenMPI && k != "" {
		return []byte("ompi-job-key:" + k), nil
	}
	return nil, fmt.Errorf("started by %s: set %s to the same secret on every rank (for example %s)", env.Source, EnvSecret, secretHint(env.Family))
}

// deriveMeeting completes r, a rank started by a launcher that gave no
// rendezvous address: with every rank on one host, they meet through a
// file in a directory of the job's (Open MPI, Slurm) or through the
// launcher's key-value space (MPICH); across hosts, Slurm's node list and
// job id give rank 0's address, and where nothing does, the error says
// what to set.
func deriveMeeting(env launcher.Env, r role, bind string) (role, error) {
	switch env.Family {
	case launcher.OpenMPI:
		if env.LocalSize != 0 && env.LocalSize != env.Size {
			return role{}, fmt.Errorf("started by %s with ranks on several hosts (OMPI_COMM_WORLD_LOCAL_SIZE=%d of OMPI_COMM_WORLD_SIZE=%d), where rank 0's address cannot be found: pass --master HOST:PORT (rank 0's host and a free port, the same on every rank) and --bind IFACE",
				env.Family, env.LocalSize, env.Size)
		}
		job, dir := env.OpenMPI.Job, env.OpenMPI.SessionDir
		if job == "" || dir == "" {
			// Open MPI 5 (PRRTE): the PMIx namespace names the job.
			job, dir = env.OpenMPI.Namespace, ""
		}
		if job == "" {
			return role{}, fmt.Errorf("started by %s, which names no job (neither OMPI_MCA_ess_base_jobid nor PMIX_NAMESPACE): pass --master HOST:PORT and set %s (%s)", r.Source, EnvSecret, secretHint(env.Family))
		}
		if dir != "" {
			if err := privateDir(dir); err != nil {
				return role{}, fmt.Errorf("OMPI_MCA_orte_jobfam_session_dir=%q: the ranks' rendezvous file cannot live there: %w", dir, err)
			}
		}
		r.meet = &meetSpec{dir: dir, name: "hccl-test-ompi-" + fileSafe(job), job: "Open MPI job " + job}
	case launcher.MPICH:
		if env.PMIFD < 0 {
			return role{}, fmt.Errorf("started by %s without PMI_FD, so the ranks cannot reach the process manager: pass --master HOST:PORT and set %s (%s)", r.Source, EnvSecret, secretHint(env.Family))
		}
		if env.LocalSize != 0 && env.LocalSize != env.Size && bind == "" {
			return role{}, fmt.Errorf("started by %s with ranks on several hosts (MPI_LOCALNRANKS=%d of PMI_SIZE=%d): pass --bind IFACE (or an address) so that the ranks listen where the others can reach them", env.Family, env.LocalSize, env.Size)
		}
		r.meet = &meetSpec{pmiFD: env.PMIFD, job: "MPICH job"}
	case launcher.Slurm:
		return deriveSlurm(env, r, bind)
	default:
		return role{}, fmt.Errorf("started by %s, which gives no rendezvous address: pass --master host:port (rank 0's, the same on every rank) or set MASTER_ADDR and MASTER_PORT", r.Source)
	}
	if env.Secret != "" {
		r.Secret = []byte(env.Secret)
	}
	return r, nil
}

// deriveSlurm is deriveMeeting under srun: on one node, a file named by
// the job and step; across nodes, the first node of the step at a port
// from the job and step id (slurmPort), with the secret from
// HCCL_TEST_SECRET, which Slurm has no per-job value for.
func deriveSlurm(env launcher.Env, r role, bind string) (role, error) {
	s := env.Slurm
	single := s.Nodes == 1 || (s.Nodes == 0 && len(s.Hosts) == 1)
	if single {
		name := fmt.Sprintf("hccl-test-slurm-%d.%d", s.Job, s.Step)
		if s.Cluster != "" {
			name = fmt.Sprintf("hccl-test-slurm-%s-%d.%d", fileSafe(s.Cluster), s.Job, s.Step)
		}
		r.meet = &meetSpec{name: name, job: fmt.Sprintf("Slurm job %d step %d", s.Job, s.Step)}
		if env.Secret != "" {
			r.Secret = []byte(env.Secret)
		}
		return r, nil
	}
	if len(s.Hosts) == 0 {
		nodes := "an unknown number of nodes (no SLURM_STEP_NUM_NODES, SLURM_NNODES or SLURM_JOB_NUM_NODES)"
		if s.Nodes > 0 {
			nodes = fmt.Sprintf("%d nodes (%s=%d)", s.Nodes, s.NodesVar, s.Nodes)
		}
		return role{}, fmt.Errorf("started by %s on %s, without a node list (no SLURM_STEP_NODELIST, SLURM_JOB_NODELIST or SLURM_NODELIST) to find rank 0's host: pass --master HOST:PORT", r.Source, nodes)
	}
	r.Master = net.JoinHostPort(s.Hosts[0], strconv.Itoa(slurmPort(s.Job, s.Step)))
	var missing []string
	if bind == "" {
		missing = append(missing, "pass --bind IFACE (or an address) so that the ranks listen where the others can reach them")
	}
	if env.Secret == "" {
		missing = append(missing, fmt.Sprintf("set %s to the same secret on every rank (%s)", EnvSecret, secretHint(launcher.Slurm)))
	}
	if len(missing) > 0 {
		nodes := fmt.Sprintf("%d nodes", len(s.Hosts))
		if s.Nodes > 0 {
			nodes = fmt.Sprintf("%d nodes", s.Nodes)
		}
		return role{}, fmt.Errorf("started by %s on %s (%s=%s), meeting at %s (the first node, port %d + (job x 32 + step) mod %d): %s",
			launcher.Slurm, nodes, s.ListVar, s.List, r.Master, SlurmPortBase, SlurmPortSpan, strings.Join(missing, ", and "))
	}
	r.Secret = []byte(env.Secret)
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
