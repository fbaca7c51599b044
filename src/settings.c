/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  gpusort's settings (GUCs): their variables, bounds and documentation.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>

#include "utils/guc.h"
#include "utils/varlena.h"

#include "compat.h"
#include "settings.h"

bool		gpusort_enabled = true;
bool		gpusort_enabled_explicit = false;
bool		gpusort_loaded_by_choice = false;
int			gpusort_min_rows = 1000;
int			gpusort_device = GPUSORT_DEVICE_AUTO;
int			gpusort_work_mem = -1;
bool		gpusort_spill = true;
bool		gpusort_window_functions = true;
bool		gpusort_parallel_window = true;
int			gpusort_min_run_rows = 2048;
int			gpusort_gpu_id = 0;
int			gpusort_gpu_memory = -1;
bool		gpusort_gpu_prestart = false;
bool		gpusort_service = true;
char	   *gpusort_service_gpus = NULL;
int			gpusort_service_memory = -1;
int			gpusort_service_buffer = 1024;
int			gpusort_held_gpus = 0;
int			gpusort_service_wait = 60000;
int			gpusort_prefault_threads = 4;
int			gpusort_key_threads = 7;
int			gpusort_xfrm_scramble = 0;
bool		gpusort_debug_hold_rows = false;
int			gpusort_debug_hold_stores = 0;
bool		gpusort_huge_pages = false;

/* gpusort.device's values: auto, the engines, the end (gpusort_define_device) */
static struct config_enum_entry device_options[GPUSORT_MAX_ENGINES + 2];

/*
 * gpusort.enabled: keeps, beside each value, whether it was set explicitly
 * (any source above the defaults), so that a rolled-back SET or a RESET
 * brings back the right answer along with the value.
 */
static bool
check_enabled(bool *newval, void **extra, GucSource source)
{
	bool	   *explicit = compat_guc_malloc(sizeof(bool));

	if (explicit == NULL)
		return false;
	*explicit = (source > PGC_S_DYNAMIC_DEFAULT);
	*extra = explicit;
	return true;
}

static void
assign_enabled(bool newval, void *extra)
{
	gpusort_enabled_explicit = *(bool *) extra;
}

bool
gpusort_planner_acts(void)
{
	return gpusort_enabled && (gpusort_loaded_by_choice || gpusort_enabled_explicit);
}

/* gpusort.work_mem: -1 (use work_mem) or at least 64 kB, as work_mem. */
static bool
check_work_mem(int *newval, void **extra, GucSource source)
{
	if (*newval == -1 || *newval >= 64)
		return true;
	GUC_check_errdetail("gpusort.work_mem must be -1 (use work_mem) or at least 64kB.");
	return false;
}

/*
 * gpusort.gpu_memory: -1, or at least 1MB.  A value that rounds to 0 MB
 * (as '1kB' does) would otherwise quietly mean something else.
 */
static bool
check_gpu_memory(int *newval, void **extra, GucSource source)
{
	if (*newval == 0)
	{
		GUC_check_errdetail("It must be -1 (80%% of the GPU's free memory) or at least 1MB.");
		return false;
	}
	return true;
}

bool
gpusort_parse_service_gpus(const char *value, List **ids, char **bad)
{
	char	   *copy = pstrdup(value);
	List	   *entries;
	ListCell   *lc;
	bool		ok = SplitGUCList(copy, ',', &entries);

	*ids = NIL;
	*bad = NULL;
	foreach(lc, entries)
	{
		char	   *entry = lfirst(lc);
		char	   *end;
		long		id;

		if (!ok)
			break;
		errno = 0;
		id = strtol(entry, &end, 10);
		if (!isdigit((unsigned char) entry[0]) || *end != '\0' || errno != 0 ||
			id > INT_MAX)
		{
			*bad = pstrdup(entry);
			ok = false;
			break;
		}
		*ids = lappend_int(*ids, (int) id);
	}
	list_free(entries);
	pfree(copy);
	if (!ok)
	{
		list_free(*ids);
		*ids = NIL;
	}
	return ok;
}

/* gpusort.service_gpus: CUDA device numbers separated by commas, or empty. */
static bool
check_service_gpus(char **newval, void **extra, GucSource source)
{
	List	   *ids;
	char	   *bad;

	if (gpusort_parse_service_gpus(*newval, &ids, &bad))
	{
		list_free(ids);
		return true;
	}
	if (bad != NULL)
		GUC_check_errdetail("\"%s\" is not a CUDA device number (a non-negative integer).", bad);
	else
		GUC_check_errdetail("It must be CUDA device numbers separated by commas, none empty, or empty for all.");
	return false;
}

/* The GPU service's settings (PGC_POSTMASTER: only while preloading). */
static void
define_service_settings(void)
{
	DefineCustomBoolVariable("gpusort.service",
							 "Sorts on the GPU through one service for the whole server.",
							 "With shared_preload_libraries, a background worker starts one "
							 "process per GPU, which alone runs CUDA; backends hand it their "
							 "sorts.  Off, or without preloading, each backend starts CUDA itself.",
							 &gpusort_service,
							 true,
							 PGC_POSTMASTER, 0,
							 NULL, NULL, NULL);

	DefineCustomStringVariable("gpusort.service_gpus",
							   "The GPUs of the GPU service: CUDA device numbers separated by commas; empty for all.",
							   "One process each; a GPU named twice gets two, which share its memory.",
							   &gpusort_service_gpus,
							   "",
							   PGC_POSTMASTER, 0,
							   check_service_gpus, NULL, NULL);

	DefineCustomIntVariable("gpusort.service_memory",
							"Device memory the GPU service may use on each GPU, for all backends; -1 uses 80% of the GPU's free memory.",
							"A sort that needs more is split into key ranges that the GPUs sort at once.",
							&gpusort_service_memory,
							-1, -1, INT_MAX,
							PGC_POSTMASTER, GUC_UNIT_MB,
							check_gpu_memory, NULL, NULL);

	DefineCustomIntVariable("gpusort.service_buffer",
							"Shared host memory, pinned for the GPUs, through which sort jobs travel to the GPU service; 0: none.",
							"Jobs that do not fit in it travel in a segment of their own, copied by the GPU's process.",
							&gpusort_service_buffer,
							1024, 0, 16384,
							PGC_POSTMASTER, GUC_UNIT_MB,
							NULL, NULL, NULL);
}

/* Defines the settings; called once, by _PG_init. */
void
gpusort_define_settings(void)
{
	DefineCustomBoolVariable("gpusort.enabled",
							 "Replaces Sort plan nodes with GpuSort.",
							 "Where the library was loaded by a call of one of its "
							 "functions rather than by a preload setting or LOAD, "
							 "only when set explicitly.",
							 &gpusort_enabled,
							 true,
							 PGC_USERSET, 0,
							 check_enabled, assign_enabled, NULL);

	DefineCustomIntVariable("gpusort.min_rows",
							"Inputs with fewer rows are sorted by PostgreSQL's tuplesort.",
							"Applies to the planner's estimate and to the actual input.",
							&gpusort_min_rows,
							1000, 0, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.work_mem",
							"Memory budget of one GpuSort node; -1 uses work_mem.",
							"Inputs that would exceed it are sorted in runs that spill to "
							"temporary files (gpusort.spill).",
							&gpusort_work_mem,
							-1, -1, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							check_work_mem, NULL, NULL);

	DefineCustomBoolVariable("gpusort.spill",
							 "Sorts inputs larger than gpusort.work_mem in runs on the engines, "
							 "merged from temporary files.",
							 "When off, such inputs are handed to PostgreSQL's tuplesort.",
							 &gpusort_spill,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.held_gpus",
							"How many of the GPU service's GPU processes hold the rows of one "
							"input over the memory budget; 0: one where one has room for them, else as many as have.",
							"Each holds a part of the rows, sorted at once with the others; "
							"GpuSort merges the parts as it returns the rows.",
							&gpusort_held_gpus,
							0, 0, 64,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.service_wait",
							"How long a sort waits for the GPU service's device memory that "
							"other sorts hold, while the GPU runs none of their jobs, before "
							"its rows go to sorted runs.",
							"Sorts that together outgrow the GPU's memory take it one after "
							"another, however long each takes; 0: no wait.",
							&gpusort_service_wait,
							60000, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.window_functions",
							 "Computes ranking window functions in GpuSort, in place of WindowAgg.",
							 "row_number(), rank(), dense_rank(), percent_rank(), cume_dist(), "
							 "ntile() and count(*) over a whole partition, as the rows are "
							 "returned. Takes effect when queries are planned.",
							 &gpusort_window_functions,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.parallel_window",
							 "Computes ranking window functions below a Gather, in every participant.",
							 "Where a query aggregates a window's values from a subquery, the "
							 "participants of a parallel plan sort their rows as one input held "
							 "on the GPU and each computes the values of slices of it. "
							 "Takes effect when queries are planned.",
							 &gpusort_parallel_window,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.min_run_rows",
							"Inputs over the memory budget whose budget holds fewer rows "
							"are handed to PostgreSQL's tuplesort.",
							"Sorted runs this short cost more than tuplesort's own. A developer "
							"option: the tests set it to 0 to sort tiny budgets in runs.",
							&gpusort_min_run_rows,
							2048, 0, INT_MAX,
							PGC_USERSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.gpu_id",
							"The GPU that GpuSort uses, on hosts with several.",
							"A CUDA device number, as CUDA_VISIBLE_DEVICES leaves them.",
							&gpusort_gpu_id,
							0, 0, 1023,
							PGC_SUSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.gpu_memory",
							"Device memory one backend may use for sorting without the GPU service; -1 uses 80% of the GPU's free memory.",
							"Applies where a backend runs CUDA itself (gpusort.service off, or the library not preloaded); "
							"a sort that needs more runs on the CPU engine.",
							&gpusort_gpu_memory,
							-1, -1, INT_MAX,
							PGC_SUSET, GUC_UNIT_MB,
							check_gpu_memory, NULL, NULL);

	DefineCustomBoolVariable("gpusort.gpu_prestart",
							 "Starts the GPU when the library is loaded into a backend.",
							 "Takes effect with session_preload_libraries or LOAD, not with "
							 "shared_preload_libraries (the postmaster never starts CUDA).",
							 &gpusort_gpu_prestart,
							 false,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);

	/* the service's, which only preloading can start, are set at start */
	if (process_shared_preload_libraries_in_progress)
		define_service_settings();

	DefineCustomIntVariable("gpusort.prefault_threads",
							"Helper threads per backend that map a sort's fresh memory ahead of its use.",
							"The kernel's zeroing of new pages then runs on other cores; 0 turns it off.",
							&gpusort_prefault_threads,
							4, 0, 64,
							PGC_SUSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.key_threads",
							"Helper threads per backend that make the keys of text under libc "
							"and ICU collations, and check those of libc.",
							"strxfrm() keys are made, and their order checked with strcoll(), by "
							"the backend and this many threads, no more than the cores; "
							"0: by the backend alone.",
							&gpusort_key_threads,
							7, 0, 63,
							PGC_SUSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.xfrm_scramble",
							"For tests only: replaces every Nth strxfrm() key with a wrong one.",
							"Shows that the order check repairs keys that disagree with "
							"strcoll(); 0 (the default) turns it off.",
							&gpusort_xfrm_scramble,
							0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.debug_hold_rows",
							 "For tests only: inputs over the memory budget are held by the CPU engine, in host memory.",
							 "Runs the GpuSort node's paths for inputs held by an engine "
							 "(the GPU's) where there is no GPU; not for production: "
							 "the rows held ignore the memory budget.  Off by default.",
							 &gpusort_debug_hold_rows,
							 false,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpusort.debug_hold_stores",
							"For tests only: the stores that the CPU engine holding rows takes from each process before it declines one.",
							"With gpusort.debug_hold_rows, the engine then declines "
							"every later store of that process, as a GPU declines "
							"rows for want of device memory, so that the paths for "
							"rows refused midway run where there is no GPU.  0 (the "
							"default): it takes them all.",
							&gpusort_debug_hold_stores,
							0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpusort.huge_pages",
							 "Asks for transparent huge pages for the rows a sort holds.",
							 "Their random reads in sorted order then miss the TLB less; "
							 "where the kernel compacts memory to make huge pages, their "
							 "first use can stall.",
							 &gpusort_huge_pages,
							 false,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
}

void
gpusort_define_device(const char *const *engines, int n)
{
	int			option = 0;

	Assert(n >= 1 && n <= GPUSORT_MAX_ENGINES);
	device_options[option++] = (struct config_enum_entry) {"auto", GPUSORT_DEVICE_AUTO, false};
	for (int engine = 1; engine <= n; engine++)
		device_options[option++] = (struct config_enum_entry) {engines[engine % n], engine % n, false};
	device_options[option] = (struct config_enum_entry) {NULL, 0, false};

	DefineCustomEnumVariable("gpusort.device",
							 "Where GpuSort sorts: auto, gpu or cpu.",
							 "auto uses a GPU when one works, else the CPU engine.",
							 &gpusort_device,
							 GPUSORT_DEVICE_AUTO,
							 device_options,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("gpusort");
}
