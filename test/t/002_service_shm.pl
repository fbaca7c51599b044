# 002_service_shm.pl: the GPU service's own shared memory objects
# (/dev/shm/gpusort.<postmaster pid>.*, src/service/shm_objects.c) do not
# outlive their server, and a start removes those of a server whose
# postmaster was killed outright, and only those.
#
# Before the start, objects are left in /dev/shm as a dead postmaster's
# (its pid: a process that has exited) and as a live process's (this
# test's own pid). A cluster that preloads gpusort with a buffer of an odd
# size (gpusort.service_buffer = 37MB, a size nothing else in /dev/shm
# has) starts and waits for the service to settle; then:
#   - the dead postmaster's objects are gone, the live process's are not;
#   - while it runs: the buffer is there where a GPU is ready, and nothing
#     of it where none is (a host without a GPU makes no buffer); the
#     service's state ("control") is never in /dev/shm (unlinked once the
#     postmaster mapped it);
#   - its checkpointer killed with SIGKILL (the server restarts after the
#     crash): an object of a job of this server's is gone after the restart;
#   - after pg_ctl stop -m immediate: nothing of this server's is left,
#     neither a file of the buffer's size seen while it ran, nor an object
#     of a job of this server's, nor any gpusort.<postmaster pid>.* file.
# A library built without CUDA has no service and makes no object: the
# checks of what it removes are skipped, the others hold all the same.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep usleep);

my $buffer_mb = 37;

# /dev/shm's files of the buffer's size owned by this user (the server's),
# and gpusort's own files of the postmaster $pmpid
sub buffer_files
{
	my ($pmpid) = @_;
	my @found;
	opendir(my $dh, '/dev/shm') or return ();
	for my $name (sort readdir $dh)
	{
		my @st = lstat("/dev/shm/$name");
		next unless @st && -f _ && $st[4] == $<;
		push @found, "/dev/shm/$name"
		  if $st[7] == $buffer_mb * 1024 * 1024
		  || $name =~ /^gpusort\.$pmpid\./;
	}
	closedir $dh;
	return @found;
}

# an object in /dev/shm, as gpusort names them
sub leave_object
{
	my ($name) = @_;
	open(my $fh, '>', "/dev/shm/$name") or die "could not write /dev/shm/$name: $!";
	print $fh "left\n";
	close $fh;
	return "/dev/shm/$name";
}

# a pid that no process has: one that has exited
my $dead = fork();
die "fork: $!" unless defined $dead;
exit 0 if $dead == 0;
waitpid($dead, 0);
my @dead_objects =
  (leave_object("gpusort.$dead.buffer"), leave_object("gpusort.$dead.4242.1"));
my $live_object = leave_object("gpusort.$$.buffer");

my $node = PostgreSQL::Test::Cluster->new('shm');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'gpusort'
gpusort.service_buffer = ${buffer_mb}MB
# as by default, which PostgreSQL::Test::Cluster turns off
restart_after_crash = on
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION gpusort');

my $pmpid = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];

# settled: every GPU ready, or "no device" (or no service: a CPU-only build)
ok( $node->poll_query_until(
		'postgres', q{
SELECT count(*) = 0 OR bool_and(state IN ('ready', 'no device'))
FROM gpusort_service}),
	'the service settled');
my $service = $node->safe_psql('postgres', 'SELECT count(*) FROM gpusort_service');
my $ready = $node->safe_psql('postgres',
	q{SELECT count(*) FROM gpusort_service WHERE state = 'ready'});

SKIP:
{
	skip 'no GPU service (a library built without CUDA)', 2 unless $service > 0;
	is(join(' ', grep { -e $_ } @dead_objects),
		'', 'the start removed the objects of a postmaster that is gone');
	ok(-e $live_object, 'the start left the objects of a live process alone');
}
unlink @dead_objects, $live_object;

# The supervisor makes the buffer in the round of its loop (250 ms) after
# a GPU process found a GPU: where one is ready, wait up to 10 s for it;
# where none is, give it 2 s to show up wrongly.
my @running;
if ($ready > 0)
{
	for (1 .. 100)
	{
		@running = buffer_files($pmpid);
		last if @running;
		usleep(100_000);
	}
}
else
{
	sleep 2;
	@running = buffer_files($pmpid);
}
note "postmaster $pmpid, GPUs ready: $ready; the buffer's files: @running";
if ($ready > 0)
{
	ok(@running > 0, "a GPU is ready: there is a buffer of $buffer_mb MB");
}
else
{
	is("@running", '', 'no GPU is ready: there is no buffer');
}
ok(!-e "/dev/shm/gpusort.$pmpid.control",
	"the service's state is not in /dev/shm (unlinked once mapped)");

# A crash: the postmaster restarts the server, and removes this server's
# objects (a job's of a backend that died) before it makes them anew.
my $job;
SKIP:
{
	skip 'no GPU service (a library built without CUDA)', 2 unless $service > 0;
	$job = leave_object("gpusort.$pmpid.4242.1");
	my $checkpointer = $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'});
	my $offset = -s $node->logfile;
	kill 'KILL', $checkpointer;
	$node->wait_for_log(qr/all server processes terminated; reinitializing/, $offset);
	ok( $node->poll_query_until(
			'postgres', q{
SELECT count(*) = 0 OR bool_and(state IN ('ready', 'no device'))
FROM gpusort_service}),
		"the server restarted after its checkpointer $checkpointer was killed");
	ok(!-e $job, "the restart removed the object of a job of this server's");
	unlink $job;
	push @running, buffer_files($pmpid);
}

# an object of a job of this server's, as a backend that an immediate stop
# kills leaves it
$job = leave_object("gpusort.$pmpid.4243.1") if $service > 0;
$node->stop('immediate');
my %seen;
my @left = grep { -e $_ && !$seen{$_}++ } @running, buffer_files($pmpid);
is("@left", '', 'after pg_ctl stop -m immediate nothing of this server is left');
unlink @left;

# A start removes what the immediate stop left of PostgreSQL's own dynamic
# shared memory; a fast stop then leaves nothing.
$node->start;
my $pmpid2 = (split /\n/, slurp_file($node->data_dir . '/postmaster.pid'))[0];
$node->stop;
is(join(' ', buffer_files($pmpid2)), '', 'after a fast stop nothing of it is left');

done_testing();
