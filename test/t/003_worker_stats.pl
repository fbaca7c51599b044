# 003_worker_stats.pl: EXPLAIN ANALYZE shows each parallel worker's GpuSort
# once, with the rows it sorted, however many parallel queries run at once.
#
# A cluster that preloads gpusort runs EXPLAIN (ANALYZE, FORMAT JSON) of
# parallel sorts through ws_check(), which finds every GpuSort node in the
# plan and checks that
#   - it lists each worker once, and no more workers than the Gather
#     launched (the last run's, where the Gather ran more than once; a
#     worker whose plan never asked the node for a row has no entry);
#   - the rows that the leader and the listed workers sorted add up to the
#     rows that the node's input returned in one run of the Gather (where
#     the participants shared one input, the leader's are all of them, and
#     the workers' those they added).
# The queries: an ORDER BY under a Gather Merge, a sort of rows that are
# their one key below a group aggregate, a parallel merge join (whose inner
# sort reads the whole table in every participant), the same ORDER BY with
# every input held by the CPU engine as the GPU holds it (the participants
# sharing one input), and an ORDER BY in a subplan that NOT IN runs once
# for each outer row (a Gather run three times).  They run first in one
# session, then from many sessions at once: SESSIONS (default 6) sessions
# that each run every query ROUNDS (default 4) times, and as many streams
# of short sessions, one query each (STREAM_SESSIONS, default 15, each),
# whose workers end while the others' run.
#
# Each parallel query keeps its workers' statistics in its own shared
# memory (src/node/parallel/worker_stats.c): no query can see another's, nor an
# earlier run's.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $sessions = $ENV{SESSIONS} // 6;
my $rounds = $ENV{ROUNDS} // 4;
my $stream_sessions = $ENV{STREAM_SESSIONS} // 15;
# EXPLAIN shows the input's rows as an average per loop, rounded: the rows
# are exact only where the loops divide them.  A Gather runs at most three
# times (the NOT IN subplan), each with one to five participants whose
# number may change from run to run under load: three runs' rows, 360360,
# are divisible by every number of loops up to 15.
my $rows = 120120;

my $node = PostgreSQL::Test::Cluster->new('worker_stats');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'gpusort'
max_connections = @{[ 2 * $sessions + 20 ]}
max_worker_processes = 40
max_parallel_workers = 40
});
$node->start;

$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION gpusort;
CREATE TABLE ws_t AS
  SELECT g AS id, (hashint4(g) & 2147483647) % 100000 AS k, md5(g::text) AS pad
  FROM generate_series(1, $rows) g;
ALTER TABLE ws_t SET (parallel_workers = 4);
ANALYZE ws_t;

-- 'ok', or what is wrong with each GpuSort of the query's plan
CREATE FUNCTION ws_check(query text) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE
  plan jsonb;
  launched numeric;
  gather_loops numeric;
  sort jsonb;
  input jsonb;
  workers jsonb;
  want numeric;
  got numeric;
  added numeric;
  bad text := '';
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) ' || query INTO plan;
  launched := jsonb_path_query_first(plan, 'strict \$.**."Workers Launched"');
  gather_loops := jsonb_path_query_first(plan,
    'strict \$.** ? (@."Node Type" like_regex "^Gather")."Actual Loops"');
  FOR sort IN SELECT * FROM jsonb_path_query(plan,
      'strict \$.** ? (@."Custom Plan Provider" == "GpuSort")')
  LOOP
    input := sort->'Plans'->0;
    workers := coalesce(sort->'GpuSort Workers', '[]');
    -- the rows of one run of the Gather, every participant's
    want := (input->>'Actual Rows')::numeric * (input->>'Actual Loops')::numeric
            / gather_loops;
    added := coalesce((SELECT sum((w->>'Sorted Rows')::numeric)
                       FROM jsonb_array_elements(workers) w), 0);
    got := coalesce((sort->>'Sorted Rows')::numeric, 0);
    IF sort->>'Sort Method' LIKE 'rows of all participants%' THEN
      IF added > want THEN
        bad := bad || format('the workers added %s rows of %s; ', added, want);
      END IF;
    ELSE
      got := got + added;
    END IF;
    IF jsonb_array_length(workers) > launched THEN
      bad := bad || format('%s worker entries for %s launched; ',
                           jsonb_array_length(workers), launched);
    END IF;
    IF (SELECT count(DISTINCT w->>'Worker Number') FROM jsonb_array_elements(workers) w)
       <> jsonb_array_length(workers) THEN
      bad := bad || 'a worker listed twice; ';
    END IF;
    IF got <> want THEN
      bad := bad || format('rows sorted %s, the input''s %s; ', got, want);
    END IF;
  END LOOP;
  RETURN CASE WHEN bad = '' THEN 'ok' ELSE bad || query END;
END \$\$;
});

# Every query's plan is parallel, with workers.
my $settings = q{
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 4;
SET gpusort.device = cpu; SET gpusort.work_mem = '64MB';
SET enable_hashagg = off; SET enable_hashjoin = off; SET enable_nestloop = off;
SET enable_material = off; SET client_min_messages = warning;
};
my @queries = (
	'SELECT * FROM ws_t ORDER BY k, id',
	'SELECT k % 1000, count(*) FROM ws_t GROUP BY 1',
	'SELECT count(*) FROM ws_t a JOIN ws_t b ON a.id = b.k',
	# (NOT IN finds none: every run reads every row)
	'SELECT count(*) FROM (VALUES (-1), (-2), (-3)) v(x) '
	  . 'WHERE v.x NOT IN (SELECT k FROM ws_t ORDER BY k OFFSET 0)');
# the same ORDER BY, every participant's rows held in one input
my $held = q{SET work_mem = '64kB'; SET gpusort.work_mem = '64kB';
SET gpusort.min_run_rows = 0; SET gpusort.debug_hold_rows = on;};

# SQL that checks every query, each line an answer
sub script
{
	my ($times) = @_;
	my $sql = $settings . "SET work_mem = '64kB';\n";
	for (1 .. $times)
	{
		$sql .= "SELECT ws_check(\$q\$$_\$q\$);\n" for @queries;
		$sql .= "BEGIN; $held SELECT ws_check(\$q\$$queries[0]\$q\$); ROLLBACK;\n";
	}
	return $sql;
}

my $one = $node->safe_psql('postgres', script(1));
is($one, join("\n", ('ok') x (@queries + 1)), 'one session: every worker once, the rows add up')
  or diag $one;

# many at once
my $dir = PostgreSQL::Test::Utils::tempdir;
my @harness;
$ENV{PGHOST} = $node->host;
$ENV{PGPORT} = $node->port;
sub start_psql
{
	my ($script, $out) = @_;
	open(my $fh, '>', "$out.sql") or die "could not write $out.sql: $!";
	print $fh $script;
	close $fh;
	push @harness,
	  IPC::Run::start(
		[ 'psql', '-X', '-q', '-At', '-d', $node->connstr('postgres') ],
		'<', "$out.sql", '>', "$out.out", '2>', "$out.err");
}
for my $s (1 .. $sessions)
{
	start_psql(script($rounds), "$dir/session.$s");
}
# streams of short sessions: psql runs one after another, each one query
for my $s (1 .. $sessions)
{
	my $stream = "$dir/stream.$s.sh";
	open(my $fh, '>', $stream) or die "could not write $stream: $!";
	for my $i (1 .. $stream_sessions)
	{
		my $q = $queries[ $i % @queries ];
		print $fh "psql -X -q -At -d postgres -c \"\$(cat <<'EOF'\n"
		  . "$settings SET work_mem = '64kB'; SELECT ws_check(\$q\$$q\$q\$);\nEOF\n)\"\n";
	}
	close $fh;
	push @harness,
	  IPC::Run::start([ 'sh', $stream ], '>', "$dir/stream.$s.out",
		'2>', "$dir/stream.$s.err");
}
$_->finish for @harness;

my ($answers, $wrong) = (0, 0);
for my $f (glob("$dir/session.*.out"), glob("$dir/stream.*.out"))
{
	for my $line (split /\n/, slurp_file($f))
	{
		$answers++;
		next if $line eq 'ok';
		$wrong++;
		diag "$f: $line" if $wrong <= 10;
	}
}
for my $f (glob("$dir/*.err"))
{
	my $err = slurp_file($f);
	diag "$f: $err" if $err ne '';
}
my $expected = $sessions * $rounds * (@queries + 1) + $sessions * $stream_sessions;
is($answers, $expected, "$sessions sessions and $sessions streams answered every check");
is($wrong, 0, 'many at once: every worker once, the rows add up');

$node->stop;
done_testing();
