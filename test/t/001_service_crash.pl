# 001_service_crash.pl: the GPU service survives kill -9 of its GPU
# processes while sessions sort, and the server does not restart.
#
# A cluster that preloads gpusort (gpusort.service is on by default) sorts a
# table in several sessions at once, each of them several times, with
# gpusort.device = gpu; a second in, every GPU process of the service gets
# SIGKILL.  Then:
#   - every sort returned PostgreSQL's order (a job lost with its process is
#     sorted on the CPU);
#   - the server did not go through a crash restart: its checkpointer is
#     the same process (pg_postmaster_start_time() would not tell, as it
#     stays what it was across one);
#   - each GPU has a new process, "ready" (or "no device" on a host without
#     a GPU), within 10 s, its restart counted;
#   - a sort after that returns the right rows too.
# On a host without a GPU the processes run, find no device and are killed
# all the same; with a library built without CUDA there is no service, and
# the test is skipped.
#
# test/gpu/service-crash.sh is the same test against a running server
# (test/gpu/gpu-tests.sh runs it on a GPU host).  Environment:
#   GPUSORT_CRASH_SESSIONS  sessions (default 8)
#   GPUSORT_CRASH_ROWS      rows of the table (default 200000)
#   GPUSORT_CRASH_ROUNDS    sorts per session (default 3)
#   GPUSORT_CRASH_DEVICE    gpusort.device of the sessions (default gpu)

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(sleep time usleep);

my $sessions = $ENV{GPUSORT_CRASH_SESSIONS} // 8;
my $rows = $ENV{GPUSORT_CRASH_ROWS} // 200000;
my $rounds = $ENV{GPUSORT_CRASH_ROUNDS} // 3;
my $device = $ENV{GPUSORT_CRASH_DEVICE} // 'gpu';

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'gpusort'
# as by default, which PostgreSQL::Test::Cluster turns off: a crash shows
# as a restart, not as a server gone
restart_after_crash = on
max_connections = @{[ $sessions + 20 ]}
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION gpusort');

# A library built without CUDA has no service, so nothing to kill: it says
# so when asked to start the GPU.
my (undef, undef, $start_err) =
  $node->psql('postgres', 'SELECT gpusort_gpu_start()');
if ($start_err =~ /built without CUDA/)
{
	plan skip_all => 'gpusort was built without CUDA: the GPU service has no process';
}

$node->safe_psql(
	'postgres', qq{
CREATE TABLE sc_t AS
  SELECT g AS id, (random() * 1e9)::int8 AS k, md5(g::text) AS pad
  FROM generate_series(1, $rows) g;
ANALYZE sc_t;
});

my @pids = split ' ',
  $node->safe_psql('postgres',
	'SELECT string_agg(pid::text, \' \') FROM gpusort_service');
ok(@pids > 0, 'the service has GPU processes: ' . join(' ', @pids));

# a crash restart starts a new checkpointer
my $checkpointer_query =
  q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'};
my $checkpointer = $node->safe_psql('postgres', $checkpointer_query);

# PostgreSQL's own order of the rows, as one md5
my $query = 'SELECT md5(string_agg(id::text, \',\')) FROM '
  . '(SELECT id FROM sc_t ORDER BY k, id OFFSET 0) s';
my $want = $node->safe_psql('postgres',
	"SET gpusort.enabled = off; $query");

# The sessions: psql processes, each reading its script of sorts from a
# file and writing to files, so that they run on their own meanwhile.
my $dir = PostgreSQL::Test::Utils::tempdir;
open(my $fh, '>', "$dir/script.sql") or die "could not write $dir/script.sql: $!";
print $fh "SET gpusort.device = $device; SET work_mem = '1GB';\n"
  . "SET client_min_messages = error;\n"
  . "$query;\n" x $rounds;
close $fh;
my @harness;
for my $s (0 .. $sessions - 1)
{
	push @harness,
	  IPC::Run::start(
		[ 'psql', '-X', '-q', '-At', '-d', $node->connstr('postgres') ],
		'<', "$dir/script.sql", '>', "$dir/out.$s", '2>', "$dir/err.$s");
}
note "$sessions sessions x $rounds sorts of $rows rows (gpusort.device = $device)";

sleep 1;
my $killed_at = time;
is(kill('KILL', @pids), scalar(@pids),
	'SIGKILL sent to the GPU processes ' . join(' ', @pids));

# Back within 10 s: new processes, settled, their restarts counted.
my $pid_list = join(',', @pids);
my $back;
while (time - $killed_at < 10)
{
	my ($rc, $state) = $node->psql(
		'postgres', qq{
SELECT bool_and(pid IS NOT NULL AND pid NOT IN ($pid_list)
                AND state IN ('ready', 'no device') AND restarts >= 1)
FROM gpusort_service});
	if ($rc == 0 && $state eq 't')
	{
		$back = time - $killed_at;
		last;
	}
	usleep(100_000);
}

$_->finish for @harness;

# every sort of every session: PostgreSQL's order, and no error
my $bad = 0;
for my $s (0 .. $sessions - 1)
{
	my $right = grep { $_ eq $want } split /\n/, slurp_file("$dir/out.$s");
	next if $right == $rounds;
	$bad++;
	diag "session $s: $right of $rounds sorts right; stderr: "
	  . slurp_file("$dir/err.$s");
}
is($bad, 0, "the $sessions sessions' sorts all returned PostgreSQL's order");

note 'service: ' . $_
  for split /\n/,
  $node->safe_psql('postgres',
	'SELECT gpu, state, pid, jobs, failures, restarts FROM gpusort_service');
note 'fallbacks: ' . $_
  for split /\n/,
  $node->safe_psql('postgres',
	'SELECT reason, sorts FROM gpusort_service_fallbacks() WHERE sorts > 0');

is($node->safe_psql('postgres', $checkpointer_query),
	$checkpointer, 'the server did not restart (the same checkpointer)');
ok(defined $back,
	'the service is back within 10 s'
	  . (defined $back ? sprintf(' (%.2f s)', $back) : ''));
is( $node->safe_psql(
		'postgres', "SET gpusort.device = $device;
		SET client_min_messages = error; $query"),
	$want,
	'a sort after the restart returns the right rows');

$node->stop;
done_testing();
