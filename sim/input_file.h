/* input_file: opening and reading the files the tools read (scenarios,
 * bench suites, traces), bounded.
 *
 * - A regular file is read; a FIFO or pipe (a named pipe, /dev/stdin, a
 *   shell's <(...)) is read as a stream, but one that sends nothing for
 *   INPUT_FILE_WAIT_S is given up ("no data after N s"), so a FIFO without a
 *   writer cannot hang a run (the wait can be set); a folder, a device (/dev/zero) or a socket is
 *   refused with what it is.
 * - What is read is capped: scenarios, suites and baselines at
 *   input_file_small_max_bytes(), traces (after decompression,
 *   traces/textfile.c) at input_file_trace_max_bytes(); the message names
 *   the limit, and how to change it (input_file_set_hints).
 *
 * The limits are the process's: the host sets them once, before anything is
 * read (the CLI from its global options --max-input-mb and --pipe-wait, and
 * the environment variables FLEETSIM_MAX_TRACE_MB and FLEETSIM_PIPE_WAIT_S).
 */
#ifndef FLEETSIM_SIM_INPUT_FILE_H
#define FLEETSIM_SIM_INPUT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

enum { INPUT_FILE_WAIT_S = 30 };
#define INPUT_FILE_SMALL_MAX_DEFAULT ((uint64_t)64 << 20)
#define INPUT_FILE_TRACE_MAX_DEFAULT ((uint64_t)16 << 30)

/* Whether path is a regular file (1), or what it is instead (0, *kind set
 * to "a folder", "a pipe", "a character device", ...), or -1 when it cannot
 * be looked at (errno set). For inputs read more than once, which a pipe
 * cannot serve. */
int input_file_is_regular(const char *path, const char **kind);
/* Opens path for reading ("-": a duplicate of standard input) after the
 * checks above; returns a file descriptor or -1 with err ("what" names the
 * kind of file in messages: "scenario", "suite", "trace"). */
int input_file_open(const char *path, const char *what, struct err *err);
/* Reads all of path (NUL-terminated one past len; free it) up to max_bytes.
 * Returns 0 or -1 with err. */
int input_file_read(const char *path, const char *what, size_t max_bytes, char **data, size_t *len,
                    struct err *err);
uint64_t input_file_trace_max_bytes(void);
uint64_t input_file_small_max_bytes(void);
/* Setters of the limits; 0 restores the default. The pipe wait is how long a
 * pipe may stay silent before it is given up (default INPUT_FILE_WAIT_S). */
void input_file_set_pipe_wait_s(int seconds);
void input_file_set_trace_max(uint64_t bytes);
void input_file_set_small_max(uint64_t bytes);
/* How a user changes the size limits and the pipe wait, added to the
 * messages that name them ("--max-input-mb raises it"); NULL adds nothing.
 * The strings are borrowed for the life of the process. */
void input_file_set_hints(const char *size_hint, const char *wait_hint);
/* "larger than 64 MiB (the limit; HINT)": how every size limit is worded. */
void input_file_too_large(char *buf, size_t len, uint64_t limit_bytes);
/* "16 GiB", "64 MiB", "1 MiB": for messages. */
void input_file_format_size(char *buf, size_t len, uint64_t bytes);

#endif
