/* slurm_cli: the command-line side of the Slurm backend that is not the
 * daemon: `fleetsim-agent submit --backend slurm --partition NAME ...`,
 * which submits through sbatch instead of the agent's socket (the job then
 * arrives held in the partition and the agent running there schedules it).
 */
#ifndef FLEETSIM_AGENT_SLURM_CLI_H
#define FLEETSIM_AGENT_SLURM_CLI_H

/* Does this submit command line ask for the Slurm backend (--backend slurm
 * before any "--")? */
int slurm_cli_wanted(int argc, char **argv);
/* argv[0] = "submit". Returns an AGENT_* exit code. */
int slurm_cli_submit(int argc, char **argv);

#endif
