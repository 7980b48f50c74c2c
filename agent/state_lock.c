#include "agent/state_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int state_lock_take(const char *path, const char *state_dir, int *fd, struct err *err)
{
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (*fd < 0)
        return err_set(err, NULL, 0, 0, "cannot open '%s': %s", path, strerror(errno));
    struct flock whole = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(*fd, F_SETLK, &whole) == 0)
        return 0;
    if (errno == EACCES || errno == EAGAIN) {
        struct flock holder = whole;
        if (fcntl(*fd, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK)
            return err_set(err, NULL, 0, 0, "another agent (pid %ld) holds '%s' (state_dir '%s' is in use)",
                           (long)holder.l_pid, path, state_dir);
        return err_set(err, NULL, 0, 0, "another agent holds '%s' (state_dir '%s' is in use)", path, state_dir);
    }
    return err_set(err, NULL, 0, 0, "cannot lock '%s': %s", path, strerror(errno));
}
