# 002_service_shm.pl: the GPU service's buffer does not outlive its server.
#
# A cluster that preloads gpusort with a buffer of an odd size
# (gpusort.service_buffer = 37MB, a size nothing else in /dev/shm has) waits
# for the service to settle, then checks /dev/shm:
#   - while it runs: the buffer is there where a GPU is ready, and nothing of
#     it where none is (a host without a GPU creates no buffer);
#   - after pg_ctl stop -m immediate: nothing of it is left, neither a file
#     of the buffer's size seen while it ran nor a file of gpusort's own
#     (gpusort.<postmaster pid>.*).
# A library built without CUDA has no service and creates no buffer: the
# checks hold all the same.

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

my $node = PostgreSQL::Test::Cluster->new('shm');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'gpusort'
gpusort.service_buffer = ${buffer_mb}MB
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
my $ready = $node->safe_psql('postgres',
	q{SELECT count(*) FROM gpusort_service WHERE state = 'ready'});

# The supervisor creates the buffer in the round of its loop (250 ms) after
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

$node->stop('immediate');
my %seen;
my @left = grep { -e $_ && !$seen{$_}++ } @running, buffer_files($pmpid);
is("@left", '', 'after pg_ctl stop -m immediate nothing of the buffer is left');

# A start removes what the immediate stop left of PostgreSQL's own dynamic
# shared memory; a fast stop then leaves nothing.
$node->start;
$node->stop;

done_testing();
