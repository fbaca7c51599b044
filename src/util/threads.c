/*-------------------------------------------------------------------------
 *
 * threads.c
 *	  Starting a backend's helper threads with every signal blocked, and
 *	  blocking signals around the calls that start threads (see threads.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <pthread.h>

#include "util/threads.h"

/* A helper thread's stack: its loops need little. */
#define HELPER_THREAD_STACK	((Size) 256 * 1024)

void
signals_block_all(sigset_t *saved)
{
	sigset_t	all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, saved);
}

void
signals_restore(const sigset_t *saved)
{
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

int
helper_threads_start(void *(*body) (void *), void *arg, int count, int *error)
{
	sigset_t	saved;
	pthread_attr_t attr;
	int			started = 0;

	*error = 0;
	/* threads inherit the signal mask of their creator */
	signals_block_all(&saved);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, HELPER_THREAD_STACK);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	while (started < count)
	{
		pthread_t	thread;

		*error = pthread_create(&thread, &attr, body, arg);
		if (*error != 0)
			break;
		started++;
	}
	pthread_attr_destroy(&attr);
	signals_restore(&saved);
	return started;
}
