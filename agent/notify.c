#include "agent/notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int notify_send(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path)
        return 0;
    size_t len = strlen(path);
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if ((path[0] != '/' && path[0] != '@') || len >= sizeof addr.sun_path)
        return -1;
    memcpy(addr.sun_path, path, len);
    if (path[0] == '@')
        addr.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&addr, alen);
    close(fd);
    return n == (ssize_t)strlen(state) ? 1 : -1;
}

int64_t notify_watchdog_us(void)
{
    const char *usec = getenv("WATCHDOG_USEC");
    if (!usec || !*usec)
        return 0;
    const char *pid = getenv("WATCHDOG_PID");
    if (pid && *pid && strtol(pid, NULL, 10) != (long)getpid())
        return 0;
    long long v = strtoll(usec, NULL, 10);
    return v > 0 ? v : 0;
}
