/* swf: reader for the Standard Workload Format (Parallel Workloads Archive),
 * plain or gzip-compressed (traces/textfile.h reads both).
 *
 * Lenient as real logs demand: a missing header, tabs, float fields, absolute
 * epoch timestamps, gaps in job ids, extra fields (Alea's extended SWF) and
 * short lines are accepted with a warning naming the line. What cannot be
 * understood (a non-numeric field, binary garbage, a corrupt gzip stream, a
 * file without jobs) is an error with file:line:col; reading goes on to list
 * more problems (up to the diag list's limit), and the call fails.
 *
 * Two conventions turn the 18 fields into jobs:
 *  SWF_REPLAY        what a real scheduler does, and the established
 *                    simulators: size = requested processors (field 8), or
 *                    allocated ones (field 5) when missing; limit = requested
 *                    time (field 9) when given; runtime = field 4. Jobs without
 *                    a runtime or a size are skipped with a warning.
 *  SWF_RLSCHEDULER   the RLScheduler (SC'20) loader, for reproducing its
 *                    tables: size = max(field 5, field 8); requested time =
 *                    field 9, or the runtime when it is -1; a negative runtime
 *                    becomes 10; jobs with runtime 0 are dropped; jobs sorted
 *                    by id.
 * In both, times become microseconds relative to the log start.
 */
#ifndef FLEETSIM_TRACES_SWF_H
#define FLEETSIM_TRACES_SWF_H

#include <stddef.h>

#include "models/workload.h"
#include "sim/err.h"

enum swf_convention { SWF_REPLAY, SWF_RLSCHEDULER };

/* Reads path into w (which must be freshly initialised). Warnings and errors
 * go to diags; on failure err holds the first error and w may hold a partial
 * workload the caller must release. Returns 0 or -1. */
int swf_read(const char *path, enum swf_convention conv, struct workload *w, struct diag_list *diags,
             struct err *err);
/* The same over a memory buffer; `name` is used in messages. */
int swf_read_buffer(const char *name, const char *data, size_t len, enum swf_convention conv,
                    struct workload *w, struct diag_list *diags, struct err *err);
/* The same, the buffer cut at line ends into `chunks` pieces (at most 8)
 * read by as many threads, then joined in order; a piece a thread could not
 * read to its end (an error, no thread) is read again after the ones before
 * it; once the reader of the first piece stops (too many errors, out of
 * memory), the threads stop too. Out of memory, everything is released and
 * read again serially. The result, diagnostics and error included, is the
 * serial read's (chunks 1) byte for byte. swf_read_buffer picks chunks
 * from the size, the processors and any address-space limit; tests pick
 * their own. */
int swf_read_buffer_chunks(const char *name, const char *data, size_t len, enum swf_convention conv,
                           int chunks, struct workload *w, struct diag_list *diags, struct err *err);
/* swf_read in `chunks` pieces (0: as swf_read_buffer picks them). A log
 * that is one gzip member is parsed as it inflates: the first piece as the
 * text arrives, the others by the inflating thread once it is whole (and
 * threads it starts), then joined as above, with the same result. */
int swf_read_chunks(const char *path, enum swf_convention conv, int chunks, struct workload *w,
                    struct diag_list *diags, struct err *err);
/* A gzip'd log (one member) read under SWF_REPLAY while a replay runs on
 * it: a thread parses it as it inflates and tells `feed` the jobs that are
 * final (models/workload.h). NULL when the file is no such log or the
 * read could not start (w untouched: read it with swf_read). Until
 * swf_feed_finish, w's jobs below the count told are all that may be read.
 * _header waits for the first job told and gives w's meta as it was then
 * (the machine a replay may size by), -1 when none was (read to the end,
 * then the usual way). _finish waits for the end of the read and returns
 * what swf_read would, with w, diags and err as it leaves them; *kept is 1
 * when the jobs told are the workload's and the header is the one given:
 * a replay on the feed stands (else it runs again on w). */
struct swf_feed;
struct workload_feed;
struct swf_feed *swf_feed_start(const char *path, struct workload *w, struct diag_list *diags, struct err *err,
                                struct workload_feed *feed);
int swf_feed_header(struct swf_feed *f, struct workload_meta *head);
int swf_feed_finish(struct swf_feed *f, int *kept);
/* The chunks swf_read_buffer reads len bytes in: one per processor this
 * process may run on (its affinity mask), at most 8, none under 1 MB. */
int swf_chunks_for(size_t len);

#endif
