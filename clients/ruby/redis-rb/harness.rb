# frozen_string_literal: true

# kvperf client harness for redis-rb with its default (pure Ruby) driver (contract v1, issue 23).
require_relative "../redis_rb"

KvperfHarness.redis_rb_main("redis-rb", :ruby)
