#!/usr/bin/env python3
"""random-orders.py: GpuSort against PostgreSQL's Sort on random tables and
random orders, as a differential test that nobody wrote the cases of.

Against a running server that preloads gpusort (PGHOST, PGPORT, PGUSER: a
role that may create a database), in a database of its own (created and
dropped): tables of 500 to 120,000 rows whose 22 columns cover the key codecs
(integers at their limits, floats with NaN, -0 and the infinities, numeric
with NaN, the infinities and long values, dates and timestamps with
infinity, intervals equal under different units, uuid, bool, bytea with
long shared prefixes, money, oid, time, and text, varchar and char under C,
a libc collation and ICU where the server has them), NULLs in every column
and few distinct values or many; then, for each table, queries of these
kinds, each run with gpusort.enabled on and off and their output compared:

  order   SELECT the whole row ORDER BY 1 to 5 random columns, each ASC or
          DESC, NULLS FIRST, LAST or the default, then id (so that the
          order is complete);
  window  rank(), dense_rank(), percent_rank(), cume_dist(), count(*),
          ntile(3) (then id, whose value depends on the order of peers),
          sum() or min() over the whole partition, running or moving
          (ROWS offsets, ties ordered by id), over a
          random PARTITION BY and such an order, per id, some with
          further clauses: count(*) over the partition, a count(*) with a
          FILTER to the last peer;
  top n   the ids whose row_number() in a random partition is at most 1, 2,
          3 or 50;
  subquery  the order of a subquery with LIMIT ALL, read whole;
  group   GROUP BY or DISTINCT over one column, hash aggregation off (the
          sort's rows are their one key), in a random direction;
  keys    1 to 3 columns whose equal values print alike, ordered by them
          alone (the last key not followed by id: rows tied on every key
          print alike);
  distinct on  the first row of each group of the order's leading keys,
          the rest of the order and id deciding which;
  window sum  one such window, per id, partitioned by any column (NOT
          NULL g1 or g2, or one that may be NULL), under an aggregate (the
          parallel window's shape), some with a run condition (top N per
          group), with parallel query forced;
  append  two or three subqueries under UNION ALL and an aggregate, each
          a window as above, a merge join
          (of each row with itself, by a column and id) or an ORDER BY, so that a Parallel Append may send each
          participant into one branch, always with parallel query forced;
          with gpusort on, it (and a window sum) must end within twice
          Sort's time and two
          seconds (a participant that waits for one that never comes would
          not; a join's output can make the query's time vary more than
          its sort's), or three times and five seconds where the CPU
          engine stands in for the GPU's holding of rows
          (gpusort.debug_hold_rows), which is slow by design;

each at a random budget (work_mem 64kB, 256kB, 4MB or 1GB: in memory, in
sorted runs, held on the GPU where one is) and with parallel query off or
forced.  Every query runs under a statement_timeout of a minute (append
and window sum queries with gpusort on: of their time bound); one that
Sort does not end in that minute is skipped, and said.  Prints each query whose
outputs differ (or that took too long), and a last line "random orders: N
queries, M mismatches"; exits 1 when M > 0.

    test/ci/random-orders.py [--seed S] [--queries N]     (S 1, N 150)
"""
import argparse
import hashlib
import random
import subprocess
import sys
import time

DB = "gpusort_random"


def psql(sql, db=DB):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def one(sql, db=DB):
    rc, out, err = psql(sql, db)
    if rc:
        sys.exit("random orders: %s: %s" % (sql[:80], err.strip()))
    return out.strip()


def collations():
    """The libc collation and the ICU one (None) that this server has."""
    libc = one("SELECT coalesce((SELECT quote_ident(collname) FROM pg_collation "
               "WHERE collprovider = 'c' AND collname IN ('en_US.utf8', 'en_US.UTF-8', 'C.utf8', 'C.UTF-8') "
               "ORDER BY collname LIKE 'en%' DESC LIMIT 1), '\"POSIX\"')")
    icu = one("SELECT quote_ident(collname) FROM pg_collation WHERE collprovider = 'i' "
              "AND collname IN ('en-x-icu', 'und-x-icu') ORDER BY collname LIMIT 1") or None
    return libc, icu


WORDS = ("ARRAY['a','A','ab','ab ','Ärger','ärger','école','ecole','ß','ss','日本','zebra',"
         "'Zebra','co-op','coop','co op']")


def columns(libc, icu):
    """name -> (type, expression of h, a hash of the row)."""
    cols = {
        "i2": ("int2", "CASE WHEN h%11=0 THEN NULL ELSE ((h%7)-3)::int2 END"),
        "i4": ("int4", "CASE WHEN h%13=0 THEN NULL WHEN h%17=0 THEN 2147483647 "
                       "WHEN h%19=0 THEN -2147483648 ELSE (h%1000)-500 END"),
        "i8": ("int8", "CASE WHEN h%13=1 THEN NULL WHEN h%29=0 THEN 9223372036854775807 "
                       "WHEN h%31=0 THEN -9223372036854775808 ELSE (h%100000)-50000 END::int8"),
        "f4": ("float4", "CASE WHEN h%13=2 THEN NULL WHEN h%23=0 THEN 'NaN'::float4 "
                         "WHEN h%37=0 THEN '-0'::float4 WHEN h%41=0 THEN '-Infinity'::float4 "
                         "ELSE ((h%200)-100)/7.0 END::float4"),
        "f8": ("float8", "CASE WHEN h%13=3 THEN NULL WHEN h%23=1 THEN 'NaN'::float8 "
                         "WHEN h%37=1 THEN '-0'::float8 WHEN h%41=1 THEN 'Infinity'::float8 "
                         "ELSE ((h%2000)-1000)/7.0 END"),
        "n": ("numeric", "CASE WHEN h%13=4 THEN NULL WHEN h%23=2 THEN 'NaN'::numeric "
                         "WHEN h%43=0 THEN 'Infinity'::numeric WHEN h%47=0 THEN '-Infinity'::numeric "
                         "WHEN h%5=0 THEN ((h%97)-40)::numeric / 3 "
                         "WHEN h%7=0 THEN h::numeric * 123456789012345678901234567890.123456 "
                         "ELSE round(((h%500)-250)/7.0, h%4) END"),
        "n152": ("numeric(15,2)", "CASE WHEN h%13=5 THEN NULL ELSE round(((h%100000)-50000)/3.0, 2) END"),
        "d": ("date", "CASE WHEN h%13=6 THEN NULL WHEN h%53=0 THEN 'infinity'::date "
                      "WHEN h%59=0 THEN '-infinity'::date ELSE DATE '2000-01-01' + (h%3000) - 1500 END"),
        "ts": ("timestamp", "CASE WHEN h%13=7 THEN NULL WHEN h%53=1 THEN 'infinity'::timestamp "
                            "ELSE TIMESTAMP '2000-01-01' + (h%100000) * interval '17 minutes' END"),
        "tz": ("timestamptz", "CASE WHEN h%13=8 THEN NULL "
                              "ELSE TIMESTAMPTZ '2000-01-01 00:00+00' + (h%5000) * interval '1 hour' END"),
        "iv": ("interval", "CASE WHEN h%13=9 THEN NULL WHEN h%3=0 THEN make_interval(0, h%5, 0, h%40) "
                           "WHEN h%3=1 THEN make_interval(0, 0, 0, 0, (h%50)*24) "
                           "ELSE make_interval(0, 0, 0, (h%60)*30) END"),
        "u": ("uuid", "CASE WHEN h%13=10 THEN NULL ELSE md5((h%300)::text)::uuid END"),
        "b": ("bool", "CASE WHEN h%13=11 THEN NULL ELSE h%2=0 END"),
        "by": ("bytea", "CASE WHEN h%13=12 THEN NULL WHEN h%5=0 THEN ''::bytea "
                        "WHEN h%7=0 THEN decode(repeat('ab', 600) || lpad(to_hex(h%5), 2, '0'), 'hex') "
                        "ELSE decode(md5((h%200)::text), 'hex') END"),
        "tc": ('text COLLATE "C"', "CASE WHEN h%14=0 THEN NULL WHEN h%5=0 THEN '' "
                                   "WHEN h%7=0 THEN 'https://example.com/shared/prefix/' || (h%50) "
                                   "ELSE (WORDS)[1+h%16] || (h%3) END".replace("WORDS", WORDS)),
        "tl": ("text COLLATE %s" % libc, "CASE WHEN h%14=1 THEN NULL WHEN h%5=1 THEN '' "
                                         "WHEN h%7=1 THEN repeat('x', 300) || (h%20) "
                                         "ELSE (WORDS)[1+h%16] || (h%4) END".replace("WORDS", WORDS)),
        "vc": ('varchar(20) COLLATE "C"', "CASE WHEN h%14=3 THEN NULL ELSE left(md5((h%400)::text), 1 + h%20) END"),
        "bp": ("char(6) COLLATE %s" % libc, "CASE WHEN h%14=4 THEN NULL "
                                            "ELSE (ARRAY['a','ab','ab ','B','b','é'])[1+h%6] END"),
        "m": ("money", "CASE WHEN h%14=5 THEN NULL ELSE ((h%10000)-5000)::numeric::money END"),
        "o": ("oid", "CASE WHEN h%14=6 THEN NULL ELSE (h%4000000000::int8)::oid END"),
        "tm": ("time", "CASE WHEN h%14=7 THEN NULL ELSE TIME '00:00' + (h%86400) * interval '1 second' END"),
    }
    if icu:
        cols["ti"] = ("text COLLATE %s" % icu, "CASE WHEN h%14=2 THEN NULL WHEN h%9=0 THEN '' "
                                              "ELSE (WORDS)[1+h%16] || (h%5) END".replace("WORDS", WORDS))
    return cols


def make_table(rnd, seed, cols, nrows):
    """A table of nrows rows, its values drawn from few or many of h."""
    spread = rnd.choice([3, 50, 1000, 1000003])
    one("DROP TABLE IF EXISTS rt; CREATE TABLE rt (id int, g1 int NOT NULL, g2 int NOT NULL, %s); "
        "INSERT INTO rt SELECT g, h %% 7, h %% 1009, %s FROM (SELECT g, (hashint4(g * %d) & 2147483647) %% %d AS h "
        "FROM generate_series(1, %d) g) s; ANALYZE rt"
        % (", ".join("%s %s" % (c, t) for c, (t, _) in cols.items()),
           ", ".join(e for _, e in cols.values()), seed, spread, nrows))


# Equal values of these print alike (not -0 and 0, 1.0 and 1.00, '1 mon'
# and '30 days', 'ab' and 'ab ' as char(6)).
PRINTED_ALIKE = {"i2", "i4", "i8", "d", "ts", "tz", "u", "b", "by", "tc", "tl", "vc", "m", "o", "tm", "ti"}

# Of those, the ones min() takes.
HAS_MIN = PRINTED_ALIKE - {"u", "b", "by"}


def item(rnd, c):
    return c + rnd.choice(["", " DESC"]) + rnd.choice(["", " NULLS FIRST", " NULLS LAST"])


def window_branch(rnd, names, order_from=None):
    """A window over a random partition key (NOT NULL or not), ordered by
    one to three of names (or one of order_from) and id, as (id, v) pairs
    whatever their order: a ranking, count(*), sum() or max() over the
    partition, lag() or lead()."""
    if order_from:
        order = item(rnd, rnd.choice(order_from))
    else:
        order = ", ".join(item(rnd, c) for c in rnd.sample(names, rnd.randint(1, 3)))
    func = rnd.choice(["rank()", "dense_rank()", "count(*)", "row_number()", "sum(id)", "max(id)",
                       "lag(id, 2, -1)", "lead(id)"])
    # (an aggregate over the whole partition)
    frame = " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING" if func in ("sum(id)", "max(id)") else ""
    return ("SELECT id, %s OVER (PARTITION BY %s ORDER BY %s, id%s) AS v FROM rt"
            % (func, rnd.choice(["g1", "g2"] + names), order, frame))


def summed(subquery):
    """A hash of each (id, v) pair of the subquery, summed: the same
    whatever order the participants return them in."""
    return "SELECT count(*), sum(hashint8(id * 1000003::int8 + v)) FROM (%s) s" % subquery


def branch(rnd, names):
    """One subquery of an append query: a window, a merge join or an order,
    as (id, v) pairs whatever their order."""
    order = ", ".join(item(rnd, c) for c in rnd.sample(names, rnd.randint(1, 3)))
    shape = rnd.choice(["window", "window", "merge join", "order"])
    if shape == "window":
        return window_branch(rnd, names)
    if shape == "merge join":
        c = rnd.choice([c for c in names if c in PRINTED_ALIKE])
        # (each row joins itself alone: a column of few values would join
        # billions of rows, more than Sort ends in the statement's time)
        return ("SELECT a.id, b.id AS v FROM rt a JOIN rt b ON a.%s = b.%s AND a.id = b.id"
                % (c, c))
    return "SELECT id, row_number() OVER () AS v FROM (SELECT id FROM rt ORDER BY %s, id LIMIT ALL) o" % order


def append_query(rnd, names):
    """Two or three branches under UNION ALL, summed as a hash of each
    (id, v) pair: the same whatever order the participants return them in."""
    branches = " UNION ALL ".join(branch(rnd, names) for _ in range(rnd.randint(2, 3)))
    return "SET enable_hashjoin = off; SET enable_nestloop = off; " + summed(branches)


def random_query(rnd, names):
    keys = rnd.sample(names, rnd.randint(1, 5))
    order = ", ".join(item(rnd, c) for c in keys)
    kind = rnd.choice(["order", "order", "window", "top n", "subquery", "group", "keys", "append",
                       "distinct on", "window sum"])
    if kind == "append":
        return kind, append_query(rnd, names)
    if kind == "window sum":
        # (one key, often one NOT NULL: keys the GPU can hold the rows by
        # alone, a NULL of the partition key among them, more often)
        window = window_branch(rnd, names, names + ["g1", "g2"] * 8)
        if ("rank()" in window or "row_number()" in window) and rnd.random() < 0.4:
            # top N per group: a run condition that ends each partition
            window = "SELECT * FROM (%s) w WHERE v <= %d" % (window, rnd.choice([1, 2, 3, 50]))
        return kind, summed(window)
    if kind == "keys":
        # the sort keys alone, the last not followed by id: rows that tie on
        # every key print alike, whatever their order
        keys = rnd.sample(sorted(c for c in names if c in PRINTED_ALIKE), rnd.randint(1, 3))
        return kind, ("SELECT %s FROM rt ORDER BY %s"
                      % (", ".join(keys), ", ".join(item(rnd, c) for c in keys)))
    if kind == "group":
        # rows that are their one key (no tuples), a group's value printed
        # from any of its rows: types whose equal values print alike
        key = rnd.choice([c for c in names if c in PRINTED_ALIKE])
        if rnd.random() < 0.5:
            return kind, ("SET enable_hashagg = off; SELECT %s, count(*) FROM rt GROUP BY 1 ORDER BY %s"
                          % (key, item(rnd, key)))
        return kind, "SET enable_hashagg = off; SELECT DISTINCT %s FROM rt ORDER BY %s" % (key, item(rnd, key))
    if kind == "order":
        return kind, "SELECT rt::text FROM rt ORDER BY %s, id" % order
    if kind == "window":
        part = rnd.choice([c for c in names if c not in keys] + [None])
        func = rnd.choice(["rank()", "dense_rank()", "percent_rank()", "cume_dist()", "count(*)", "ntile(3)",
                           "sum(g2)", "min(%s)" % rnd.choice([c for c in names if c in HAS_MIN])])
        if func == "ntile(3)":
            order += ", id"			# which peer takes which tile
        frame = ""
        shape = rnd.random()
        if func.startswith(("sum", "min")) and shape < 0.35:
            # an aggregate over the whole partition (else to the last peer)
            frame = " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
        elif func.startswith(("sum", "min")) and shape < 0.7:
            # or over rows a few before or after each (ties ordered by id)
            order += ", id"
            frame = " ROWS BETWEEN %s AND %s" % rnd.choice(
                [("2 PRECEDING", "CURRENT ROW"), ("1 PRECEDING", "3 FOLLOWING"),
                 ("CURRENT ROW", "2 FOLLOWING"), ("3 PRECEDING", "1 PRECEDING"),
                 ("1 FOLLOWING", "UNBOUNDED FOLLOWING")])
        partition = "PARTITION BY %s " % part if part else ""
        # sometimes more clauses over the same sort (one node computes them
        # all): the partition's count, a count to the last peer of the rows
        # that a FILTER keeps
        more = ""
        if part and rnd.random() < 0.3:
            more += ", count(*) OVER (PARTITION BY %s)" % part
        if rnd.random() < 0.3:
            more += ", count(*) FILTER (WHERE id %% 3 = 0) OVER (%sORDER BY %s)" % (partition, order)
        return kind, ("SELECT id, %s OVER (%sORDER BY %s%s)%s FROM rt ORDER BY id"
                      % (func, partition, order, frame, more))
    if kind == "distinct on":
        # the first row of each group of the leading keys, which the order
        # to the id decides (the node drops the others: distinct_filter.c)
        lead = keys[:rnd.randint(1, len(keys))]
        return kind, ("SELECT s::text FROM (SELECT DISTINCT ON (%s) * FROM rt ORDER BY %s, id) s"
                      % (", ".join(lead), order))
    if kind == "top n":
        return kind, ("SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY %s ORDER BY %s, id) AS rn "
                      "FROM rt) s WHERE rn <= %d ORDER BY id" % (rnd.choice(names), order, rnd.choice([1, 2, 3, 50])))
    return kind, "SELECT rt::text FROM (SELECT * FROM rt ORDER BY %s, id LIMIT ALL) rt" % order


def digest(settings, query):
    """The output's digest (or its error) and the seconds it took."""
    start = time.monotonic()
    rc, out, err = psql(settings + " " + query)
    took = time.monotonic() - start
    if rc:
        return "error: " + (err.strip().splitlines() or ["?"])[-1], took
    return hashlib.md5(out.encode()).hexdigest(), took


SERIAL = "SET max_parallel_workers_per_gather = 0;"
PARALLEL = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
            "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;")


def main():
    args = argparse.ArgumentParser(description="GpuSort against Sort on random tables and orders")
    args.add_argument("--seed", type=int, default=1)
    args.add_argument("--queries", type=int, default=150)
    opts = args.parse_args()
    rnd = random.Random(opts.seed)

    one("DROP DATABASE IF EXISTS %s" % DB, "postgres")
    one("CREATE DATABASE %s" % DB, "postgres")
    libc, icu = collations()
    cols = columns(libc, icu)
    names = list(cols)
    print("random orders: seed %d, %d queries, collations C, %s%s"
          % (opts.seed, opts.queries, libc, ", " + icu if icu else ", no ICU"), flush=True)
    stand_in = one("SHOW gpusort.debug_hold_rows", "postgres") == "on"
    done = bad = skipped = 0
    while done < opts.queries:
        make_table(rnd, opts.seed, cols, rnd.choice([500, 3000, 20000, 120000]))
        for _ in range(12):
            if done == opts.queries:
                break
            kind, query = random_query(rnd, names)
            work_mem = rnd.choice(["64kB", "256kB", "4MB", "1GB"])
            parallel = rnd.choice([SERIAL, PARALLEL])
            timed = kind in ("append", "window sum")
            if timed:
                parallel = PARALLEL
            settings = ("SET client_min_messages = error; SET statement_timeout = '60s'; "
                        "SET work_mem = '%s'; SET gpusort.min_rows = 0; SET gpusort.min_run_rows = 0; %s"
                        % (work_mem, parallel))
            off, off_s = digest(settings + " SET gpusort.enabled = off;", query)
            if "statement timeout" in off:
                # Sort did not end in the statement's time: nothing to compare
                done += 1
                skipped += 1
                print("SKIPPED (%s): Sort did not end in 60 s: %s" % (kind, query), flush=True)
                continue
            bound = off_s * 3 + 5 if stand_in else off_s * 2 + 2
            on, on_s = digest(settings + " SET gpusort.enabled = on;" +
                              (" SET statement_timeout = %d;" % (bound * 1000) if timed else ""),
                              query)
            done += 1
            late = timed and on_s > bound
            if on != off or on.startswith("error") or late:
                bad += 1
                print("MISMATCH (%s): %s\n   %s\n   gpusort on: %s (%.2f s), off: %s (%.2f s)"
                      % (kind, settings, query, on, on_s, off, off_s), flush=True)
    one("DROP DATABASE %s" % DB, "postgres")
    print("random orders: %d queries, %d mismatches%s"
          % (done, bad, ", %d skipped (Sort did not end in time)" % skipped if skipped else ""))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
