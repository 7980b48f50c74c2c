/* The tests of test_promise_order.c again, on policies/promise_order.c
 * built here with blocks of 4 promises under other names: with 64 a block
 * the random cases seldom split, empty or merge one; with 4 they do at
 * nearly every step, and a batch merged into a full block spreads over
 * several new ones. */
#define PROMISE_ORDER_BLOCK 4u
#define promise_order_init tiny_promise_order_init
#define promise_order_release tiny_promise_order_release
#define promise_order_clear tiny_promise_order_clear
#define promise_order_append tiny_promise_order_append
#define promise_order_merge tiny_promise_order_merge
#define promise_order_remove tiny_promise_order_remove
#define promise_order_whole tiny_promise_order_whole
#define promise_order_tie tiny_promise_order_tie
#include "policies/promise_order.c"

#define PROMISE_ORDER_TEST_SUITE suite_promise_order_tiny_blocks
#define PROMISE_ORDER_TEST_LABEL "promise order, blocks of 4"
#include "tests/unit/test_promise_order.c"
