/*
 * loop.h — shutdown of the event loop (signals are registered through lcore.h).
 */
#ifndef MM_LOOP_H
#define MM_LOOP_H

/* Closes every handle (stdout after it drained) and runs the loop until they closed. */
void mm_loop_shutdown(void);

#endif
