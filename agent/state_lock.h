/* state_lock: one agent per state_dir. The lock is a POSIX record lock
 * (fcntl F_SETLK) on a file in the state_dir, held for the agent's life.
 *
 * Why not flock(2): a flock lock belongs to the open file, which a forked
 * child shares until its exec closes it (O_CLOEXEC). An agent killed while a
 * child of its own sits between fork and exec (a job's setup, an scontrol
 * call) would leave the lock held for that moment, and the agent restarted
 * at once by systemd or an admin would refuse to start ("another agent
 * holds ..."). A POSIX lock belongs to the process: no child holds it, and
 * it is free the instant the agent dies.
 * The price: closing any descriptor of the lock file releases it, so the
 * agent opens that file once, here, and nowhere else.
 */
#ifndef FLEETSIM_AGENT_STATE_LOCK_H
#define FLEETSIM_AGENT_STATE_LOCK_H

#include "sim/err.h"

/* Creates (0600) and locks PATH; *fd holds it open. On refusal names the
 * state_dir in use. Returns 0 or -1 (err filled, *fd -1 or open). */
int state_lock_take(const char *path, const char *state_dir, int *fd, struct err *err);

#endif
