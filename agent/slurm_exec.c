#include "agent/slurm_exec.h"

#include <string.h>
#include <sys/wait.h>

#include "sim/child.h"

/* stdout, whole, into the caller's buffer */
static int append_to_buf(void *ctx, const char *data, size_t n)
{
    struct buf *b = ctx;
    buf_append(b, data, n);
    return b->oom ? -1 : 0;
}

int slurm_exec(const char *const *argv, struct buf *out, int timeout_ms, struct err *err)
{
    struct child_result cr;
    child_run_ms((char *const *)argv, NULL, timeout_ms, 1, out ? append_to_buf : NULL, out, &cr);
    cr.err[strcspn(cr.err, "\n")] = '\0'; /* the message keeps stderr's first line */
    if (!cr.started)
        return err_set(err, NULL, 0, 0, "cannot run '%s': no process could be started", argv[0]);
    if (cr.timed_out)
        return err_set(err, NULL, 0, 0, "'%s' did not finish within %d ms", argv[0], timeout_ms);
    if (cr.sink_failed)
        return err_set(err, NULL, 0, 0, "out of memory reading '%s'", argv[0]);
    if (WIFEXITED(cr.status) && WEXITSTATUS(cr.status) == 0)
        return 0;
    if (WIFEXITED(cr.status) && WEXITSTATUS(cr.status) == CHILD_EXIT_NO_EXEC && !cr.err[0])
        return err_set(err, NULL, 0, 0, "cannot run '%s' (are Slurm's client commands installed and on PATH?)",
                       argv[0]);
    if (WIFEXITED(cr.status))
        return err_set(err, NULL, 0, 0, "'%s %s' failed (exit %d)%s%s", argv[0], argv[1] ? argv[1] : "",
                       WEXITSTATUS(cr.status), cr.err[0] ? ": " : "", cr.err);
    return err_set(err, NULL, 0, 0, "'%s' killed by signal %d", argv[0], WTERMSIG(cr.status));
}
