# frozen_string_literal: true

# kvperf client harness for redis-rb with the hiredis driver (hiredis-rb's C extension),
# the seed's comparison against the default driver (contract v1, issue 23).
require "hiredis"
require "redis/connection/hiredis"
require_relative "../redis_rb"

KvperfHarness.redis_rb_main("redis-rb-hiredis", :hiredis)
