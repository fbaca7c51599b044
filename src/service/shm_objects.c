/*-------------------------------------------------------------------------
 *
 * shm_objects.c
 *	  The GPU service's own shared memory objects (shm_objects.h): their
 *	  names, their making and mapping, the postmaster's sweep of those its
 *	  server or a dead one left, and the objects of a backend's jobs.
 *
 * POSIX shared memory rather than memfd and file descriptors passed over a
 * socket: a backend and a GPU process are no parent and child of each
 * other, and a name lets either map an object with no channel between
 * them; a name that begins with the postmaster's pid is this server's
 * alone, and tells a sweep whose it is.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef GPUSORT_WITH_CUDA

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/memutils.h"

#include "service/service_shared.h"
#include "service/shm_objects.h"

/* Where glibc keeps the objects that shm_open() names. */
#define SHM_DIRECTORY		"/dev/shm"

/* This backend's jobs' objects, and how many it made. */
static dlist_head job_segments = DLIST_STATIC_INIT(job_segments);
static uint32 job_segments_made = 0;
static bool job_segments_watched = false;

/* The postmaster's pid: in the postmaster itself (and a single backend), ours. */
static int
postmaster_pid(void)
{
	return IsUnderPostmaster ? PostmasterPid : MyProcPid;
}

void
shm_object_name(char *name, const char *what)
{
	snprintf(name, SHM_OBJECT_NAME_LEN, "/gpusort.%d.%s", postmaster_pid(), what);
}

/*
 * Sizes a new object with its pages reserved, so that a full /dev/shm
 * fails here rather than with SIGBUS at a write (as dsm_impl.c does); a
 * cancel stops the reservation of a large one.
 */
static int
reserve_pages(int fd, Size bytes)
{
	int			rc;

	if (ftruncate(fd, bytes) != 0)
		return errno;
	do
		rc = posix_fallocate(fd, 0, bytes);
	while (rc == EINTR && !(ProcDiePending || QueryCancelPending));
	return rc;
}

int
shm_object_create(const char *name, Size bytes)
{
	int			fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	int			rc;

	/* this server's names are its own: one there is a stale one */
	if (fd < 0 && errno == EEXIST)
	{
		(void) shm_unlink(name);
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	}
	if (fd < 0)
		return errno;
	rc = reserve_pages(fd, bytes);
	close(fd);
	if (rc != 0)
		(void) shm_unlink(name);
	return rc;
}

void *
shm_object_map(const char *name, Size bytes, bool populate)
{
	int			fd = shm_open(name, O_RDWR, 0);
	void	   *p;
	int			save_errno;

	if (fd < 0)
		return MAP_FAILED;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
	save_errno = errno;
	close(fd);
	errno = save_errno;
	return p;
}

void
shm_objects_sweep(bool at_start)
{
	DIR		   *dir = opendir(SHM_DIRECTORY);
	struct dirent *de;

	if (dir == NULL)
		return;
	while ((de = readdir(dir)) != NULL)
	{
		char		path[MAXPGPATH];
		struct stat st;
		int			pid = 0;
		int			len = 0;

		if (sscanf(de->d_name, "gpusort.%d.%n", &pid, &len) != 1 || len == 0 || pid <= 0)
			continue;
		if (pid != postmaster_pid() && !(at_start && service_process_gone(pid)))
			continue;
		/* the server's user's own objects only */
		snprintf(path, sizeof(path), "%s/%s", SHM_DIRECTORY, de->d_name);
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		snprintf(path, sizeof(path), "/%s", de->d_name);
		(void) shm_unlink(path);
	}
	closedir(dir);
}

/*
 * An error or an abort releases the resource owner that was current when a
 * job's object was made: the object goes with it, as a dynamic shared
 * memory segment would (the GPU process keeps its own mapping, if any).
 */
static void
release_job_segments(ResourceReleasePhase phase, bool isCommit, bool isTopLevel,
					 void *arg)
{
	dlist_mutable_iter iter;

	if (phase != RESOURCE_RELEASE_BEFORE_LOCKS)
		return;
	dlist_foreach_modify(iter, &job_segments)
	{
		JobSegment *seg = dlist_container(JobSegment, node, iter.cur);

		if (seg->owner == CurrentResourceOwner)
			job_segment_destroy(seg);
	}
}

/* The backend exits: its jobs' objects go. */
static void
remove_job_segments(int code, Datum arg)
{
	while (!dlist_is_empty(&job_segments))
		job_segment_destroy(dlist_head_element(JobSegment, node, &job_segments));
}

JobSegment *
job_segment_create(Size bytes)
{
	JobSegment *seg;
	char		what[32];
	void	   *p;
	int			rc;

	Assert(!service_in_gpu_process);
	if (!job_segments_watched)
	{
		RegisterResourceReleaseCallback(release_job_segments, NULL);
		on_proc_exit(remove_job_segments, (Datum) 0);
		job_segments_watched = true;
	}
	seg = MemoryContextAllocZero(TopMemoryContext, sizeof(JobSegment));
	snprintf(what, sizeof(what), "%d.%u", MyProcPid, ++job_segments_made);
	shm_object_name(seg->name, what);
	rc = shm_object_create(seg->name, bytes);
	p = rc == 0 ? shm_object_map(seg->name, bytes, false) : MAP_FAILED;
	if (p == MAP_FAILED)
	{
		int			save_errno = rc != 0 ? rc : errno;

		if (rc == 0)
			(void) shm_unlink(seg->name);
		pfree(seg);
		errno = save_errno;
		return NULL;
	}
	seg->base = p;
	seg->bytes = bytes;
	seg->owner = CurrentResourceOwner;
	dlist_push_head(&job_segments, &seg->node);
	return seg;
}

void
job_segment_destroy(JobSegment *seg)
{
	dlist_delete(&seg->node);
	(void) munmap(seg->base, seg->bytes);
	(void) shm_unlink(seg->name);
	pfree(seg);
}

#endif							/* GPUSORT_WITH_CUDA */
