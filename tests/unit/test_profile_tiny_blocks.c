/* The profile tests of test_profile.c again, on policies/profile.c built
 * here with blocks of 4 steps under other names. With 64 steps a block the
 * random cases rarely fill, split or empty one; with 4, a block splits
 * every few breakpoints and merges often empty one, so the paths at block
 * ends (a window ending on a block's first step, a merge that empties a
 * block, a step at a block's start merged with the block before, whose
 * pending addition differs) are taken thousands of times. Not 2: a block
 * of 2 never has room for the two steps carve_in_block puts in, and that
 * path would go untested at block ends. */
#define PROFILE_BLOCK 4u
#define profile_init tiny_profile_init
#define profile_release tiny_profile_release
#define profile_reset tiny_profile_reset
#define profile_add_release tiny_profile_add_release
#define profile_earliest tiny_profile_earliest
#define profile_earliest_before tiny_profile_earliest_before
#define profile_reserve tiny_profile_reserve
#define profile_give_back tiny_profile_give_back
#define profile_move tiny_profile_move
#define profile_advance tiny_profile_advance
#define profile_free_at tiny_profile_free_at
#define profile_steps tiny_profile_steps
#include "policies/profile.c"

#define PROFILE_TEST_SUITE suite_profile_tiny_blocks
#define PROFILE_TEST_LABEL "profile, blocks of 4 steps"
#include "tests/unit/test_profile.c"
