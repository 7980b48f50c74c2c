/* notify: the systemd readiness protocol without libsystemd (sd_notify(3)):
 * one datagram ("READY=1", "STOPPING=1", "WATCHDOG=1", "STATUS=...") to the
 * AF_UNIX socket named in $NOTIFY_SOCKET, where a leading '@' means the
 * abstract namespace. Without $NOTIFY_SOCKET every call does nothing.
 */
#ifndef FLEETSIM_AGENT_NOTIFY_H
#define FLEETSIM_AGENT_NOTIFY_H

#include <stdint.h>

/* Returns 1 sent, 0 no socket configured, -1 failed. */
int notify_send(const char *state);
/* The watchdog period from $WATCHDOG_USEC (when $WATCHDOG_PID is unset or
 * ours), or 0 when systemd runs no watchdog for us. */
int64_t notify_watchdog_us(void);

#endif
