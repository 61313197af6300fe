# frozen_string_literal: true

# The library-independent part of kvperf's Ruby client harnesses (contract v1, issue 23):
# the workload spec, the per-worker loop, a fixed-geometry HDR histogram with its V2 compressed
# base64 encoding (written here: no gem), and the result JSON.
require "json"
require "zlib"

module KvperfHarness
  OPS = %w[SET GET INCR].freeze
  STALL_US = 5_000_000
  DEFAULT_ALLOCATION_OPS = 1000
  RVALUE_SIZE = GC::INTERNAL_CONSTANTS[:RVALUE_SIZE] || 40
  SET = 0
  GET = 1
  INCR = 2

  class Refusal < StandardError; end

  # HDR histogram: lowest 1, highest 60,000,000, 3 significant figures (2048 sub-buckets).
  class Histogram
    HALF_MAG = 10
    HALF = 1 << HALF_MAG
    MASK = 2 * HALF - 1
    HIGHEST = 60_000_000
    COUNTS = 17 * HALF # 16 buckets + 1, times the half count
    COOKIE_INNER = 0x1c849313
    COOKIE_OUTER = 0x1c849314

    attr_reader :counts, :max_index

    def initialize
      @counts = Array.new(COUNTS, 0)
      @max_index = -1
    end

    def record(value, n)
      value = 1 if value < 1
      value = HIGHEST if value > HIGHEST
      bucket = (value | MASK).bit_length - HALF_MAG - 1
      i = ((bucket + 1) << HALF_MAG) + (value >> bucket) - HALF
      @counts[i] += n
      @max_index = i if i > @max_index
    end

    def merge(other)
      (0..other.max_index).each { |i| @counts[i] += other.counts[i] }
      @max_index = other.max_index if other.max_index > @max_index
    end

    # V2: zlib stream of [header (40 bytes, big-endian) + ZigZag LEB128 counts, zero runs as -k],
    # behind an outer cookie and length, in base64.
    def encode
      body = encode_counts
      header = [COOKIE_INNER, body.bytesize, 0, 3, 1, HIGHEST, 1.0].pack("NNNNQ>Q>G")
      deflated = Zlib::Deflate.deflate(header + body)
      [[COOKIE_OUTER, deflated.bytesize].pack("NN") + deflated].pack("m0")
    end

    private

    def encode_counts
      out = +"".b
      i = 0
      while i <= @max_index
        c = @counts[i]
        run = 1
        run += 1 while c.zero? && i + run <= @max_index && @counts[i + run].zero?
        put_varint(out, c.zero? && run > 1 ? -run : c)
        i += run
      end
      out
    end

    def put_varint(out, v)
      z = v >= 0 ? v << 1 : ((-v - 1) << 1) | 1
      8.times do
        return out << z if z < 0x80

        out << ((z & 0x7f) | 0x80)
        z >>= 7
      end
      out << (z & 0xff)
    end
  end

  # Everything built once before the loops: keys, value, the command draw.
  class Workload
    attr_reader :spec, :keys, :incr_keys, :value, :ops, :cum, :total, :password

    def initialize(spec)
      @spec = spec
      count = spec["keys"]["count"]
      prefix = spec["keys"]["prefix"]
      @keys = Array.new(count) { |i| -"#{prefix}#{i}" }.freeze
      @incr_keys = Array.new(count) { |i| -"#{prefix}incr:#{i}" }.freeze
      @value = -("x" * spec["value_size"])
      @ops = spec["commands"].map { |c| OPS.index(c["command"]) }
      @total = 0.0
      @cum = spec["commands"].map { |c| @total += c["ratio"] }
      @password = ENV["KVPERF_CLIENT_PASSWORD"]
    end
  end

  # One worker: its connection, PRNG, histograms and counters.
  class Worker
    attr_reader :hist, :ops, :failed, :warm, :tx, :warm_tx, :first_error, :end_us, :pass, :pass_tx

    def initialize(wl, conn, idx)
      s = wl.spec
      @wl = wl
      @conn = conn
      @rng = Random.new(s["seed"] + idx)
      @seq = idx % s["keys"]["count"]
      @count = s["keys"]["count"]
      @step = s["concurrency"]["workers"]
      @sequential = s["keys"]["pattern"] == "sequential"
      @pipeline = s["pipeline"]
      @transaction = s["transaction"]
      @noop = s["noop"]
      @batch_ops = Array.new(@pipeline, 0)
      @batch_keys = Array.new(@pipeline, "")
      @errs = Array.new(@pipeline, nil)
      @per = [0, 0, 0]
      @op_list = wl.ops
      @only_op = wl.ops.size == 1 ? wl.ops[0] : nil
      @cum = wl.cum
      @total = wl.total
      @last = wl.ops.size - 1
      @keys = wl.keys
      @incr_keys = wl.incr_keys
      @hist = [Histogram.new, Histogram.new, Histogram.new]
      @ops = [0, 0, 0]
      @failed = [0, 0, 0]
      @warm = [0, 0, 0]
      @tx = @warm_tx = 0
      @first_error = nil
      @end_us = 0
      @pass = [0, 0, 0] # the allocation pass's calls, counted apart from warmup's
      @pass_tx = 0
      @unmeasured = @warm
      rate = s["rate"] # the open loop: this worker's batches' intended send times (µs)
      @gap = rate ? s["concurrency"]["workers"] * @pipeline / rate["rps"].to_f * 1e6 : nil
      @poisson = rate && rate["arrivals"] == "poisson"
      @pace_rng = Random.new(s["seed"] * 7919 + idx)
      @due = Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_microsecond)
    end

    # The next batch's intended send time (µs, CLOCK_MONOTONIC) once it has come (slept to),
    # nil in a closed loop or the allocation pass.
    def await_due
      return nil if @gap.nil? || @unmeasured.equal?(@pass)

      due = @due
      @due += @poisson ? -Math.log(1 - @pace_rng.rand) * @gap : @gap
      ahead = due - Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_microsecond)
      sleep(ahead / 1e6) if ahead.positive?
      due.to_i
    end

    # The allocation pass: what phase(false, …) sends from now on is counted as the pass's.
    def start_pass
      @unmeasured = @pass
    end

    def draw(j)
      op = @only_op
      unless op
        u = @rng.rand * @total
        cum = @cum
        k = 0
        k += 1 while k < @last && u >= cum[k]
        op = @op_list[k]
      end
      if @sequential
        i = @seq
        @seq = (@seq + @step) % @count
      else
        i = @rng.rand(@count)
      end
      @batch_ops[j] = op
      @batch_keys[j] = op == INCR ? @incr_keys[i] : @keys[i]
    end

    def noop(_op, _key)
      nil
    end

    # Runs until deadline_us (if > 0) or limit commands (if >= 0).
    def phase(measure, deadline_us, limit)
      return phase_single(measure, deadline_us, limit) if @pipeline == 1 && !@transaction

      phase_batches(measure, deadline_us, limit)
    end

    # Pipeline 1 without transactions, the case the noop target is set for: the same steps as
    # phase_batches with the batch bookkeeping left out.
    def phase_single(measure, deadline_us, limit)
      conn = @conn
      noop_run = @noop
      done = 0
      while limit.negative? || done < limit
        draw(0)
        op = @batch_ops[0]
        key = @batch_keys[0]
        t0 = await_due || Process.clock_gettime(Process::CLOCK_MONOTONIC, :microsecond)
        if noop_run
          noop(op, key)
        else
          begin
            conn.call(op, key)
            @errs[0] = nil
          rescue StandardError => e
            raise if connection_error?(e)

            @errs[0] = e
          end
        end
        t1 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :microsecond)
        check_stall(1) if t1 - t0 >= STALL_US
        done += 1
        if !measure
          @unmeasured[op] += 1
        elsif noop_run || !@errs[0]
          @ops[op] += 1
          @hist[op].record(t1 - t0, 1)
          @end_us = t1
        else
          record(1, t1 - t0)
          @end_us = t1
        end
        break if deadline_us.positive? && t1 >= deadline_us
      end
    end

    def phase_batches(measure, deadline_us, limit)
      done = 0
      while limit.negative? || done < limit
        n = limit.negative? ? @pipeline : [@pipeline, limit - done].min
        j = 0
        while j < n
          draw(j)
          j += 1
        end
        t0 = await_due || Process.clock_gettime(Process::CLOCK_MONOTONIC, :microsecond)
        if @noop
          noop(@batch_ops[0], @batch_keys[0])
        else
          @conn.batch(@batch_ops, @batch_keys, n, @transaction, @errs)
        end
        t1 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :microsecond)
        check_stall(n) if t1 - t0 >= STALL_US
        done += n
        if measure
          record(n, t1 - t0)
          @end_us = t1
        else
          n.times { |j| @unmeasured[@batch_ops[j]] += 1 }
          count_unmeasured_tx if @transaction
        end
        break if deadline_us.positive? && t1 >= deadline_us
      end
    end

    private

    def count_unmeasured_tx
      if @unmeasured.equal?(@pass)
        @pass_tx += 1
      else
        @warm_tx += 1
      end
    end

    # A call failing after STALL_US: the server stopped answering (the timeouts are 10 s).
    def check_stall(n)
      n.times do |j|
        next unless @errs[j] && !@noop

        ep = @wl.spec["endpoint"]
        KvperfHarness.fail(1, "server #{ep['host']}:#{ep['port']} stopped answering: #{@errs[j].message}")
      end
    end

    def connection_error?(err)
      defined?(Redis::BaseConnectionError) && err.is_a?(Redis::BaseConnectionError)
    end

    def record(n, us)
      @tx += 1 if @transaction
      j = 0
      while j < n
        op = @batch_ops[j]
        err = @errs[j]
        if err && !@noop
          @failed[op] += 1
          @first_error ||= err.message
        else
          @per[op] += 1
        end
        j += 1
      end
      op = 0
      while op < 3
        k = @per[op]
        if k.positive?
          @ops[op] += k
          @hist[op].record(us, k)
          @per[op] = 0
        end
        op += 1
      end
    end
  end

  module_function

  def load_spec(path)
    s = JSON.parse(File.read(path))
    raise Refusal, "unsupported spec format #{s['format']} v#{s['version']}" unless s["format"] == "kvperf-client-workload" && s["version"] == 1
    raise Refusal, "spec has no commands" if s["commands"].to_a.empty?

    s["commands"].each do |c|
      raise Refusal, "command #{c['command']} is not in the v1 vocabulary (SET, GET, INCR)" unless OPS.include?(c["command"])
    end
    raise Refusal, "keys.count must be >= 1" unless s["keys"]["count"].to_i >= 1
    raise Refusal, "unknown key pattern #{s['keys']['pattern']}" unless %w[random sequential].include?(s["keys"]["pattern"])
    raise Refusal, "pipeline must be >= 1" unless s["pipeline"].to_i >= 1
    raise Refusal, "exactly one of requests and duration_s must be set" if s["requests"].nil? == s["duration_s"].nil?
    raise Refusal, "concurrency model single needs workers = 1" if s["concurrency"]["model"] == "single" && s["concurrency"]["workers"] != 1
    rate = s["rate"]
    raise Refusal, 'rate must be {"rps": > 0, "arrivals": "uniform" or "poisson"}' unless rate.nil? || (rate.is_a?(Hash) && rate["rps"].is_a?(Numeric) && rate["rps"].positive? && %w[uniform poisson].include?(rate["arrivals"]))
    raise Refusal, "allocation_ops must be an integer >= 1" unless s.fetch("allocation_ops", 1).is_a?(Integer) && s.fetch("allocation_ops", 1) >= 1

    s
  rescue JSON::ParserError, Errno::ENOENT => e
    raise Refusal, "cannot read spec #{path}: #{e.message}"
  end

  def share(requests, n, i)
    return -1 if requests.nil?

    requests / n + (i < requests % n ? 1 : 0)
  end

  def run_workers(wl, conns)
    s = wl.spec
    n = s["concurrency"]["workers"]
    workers = conns.each_with_index.map { |c, i| Worker.new(wl, c, i) }
    start = Process.clock_gettime(Process::CLOCK_MONOTONIC, :microsecond)
    warm_end = start + (s["warmup_s"] * 1e6).to_i
    measure_end = s["duration_s"] ? warm_end + (s["duration_s"] * 1e6).to_i : 0
    threads = workers.each_with_index.map do |w, i|
      Thread.new do
        w.phase(false, warm_end, -1) if s["warmup_s"].positive?
        w.phase(true, measure_end, share(s["requests"], n, i))
      end
    end
    sleep([warm_end - Process.clock_gettime(Process::CLOCK_MONOTONIC, :microsecond), 0].max / 1e6)
    cpu_start = Process.times # the measured window's start: warmup's end
    threads.each(&:join)
    cpu_end = Process.times # … and its end: the last worker done
    res = merge(wl, workers, warm_end)
    res["cpu"] = { "user_s" => [cpu_end.utime - cpu_start.utime, 0.0].max,
                   "system_s" => [cpu_end.stime - cpu_start.stime, 0.0].max,
                   "source" => "Process.times (getrusage RUSAGE_SELF): every thread, from warmup's end to the last worker's" }
    res["allocations"] = allocation_pass(wl, workers)
    res["rate"] = s["rate"] if s["rate"]
    res
  end

  # The untimed allocation pass after the measured window: allocation_ops more operations by the
  # same workers (threads), GC disabled, between two reads of GC.stat. Ruby counts objects, not
  # bytes: bytes = objects x the slot size (RVALUE_SIZE) + malloc_increase_bytes' growth (what
  # ruby_xmalloc handed out, net of what was freed explicitly); the transient heap's array and
  # hash buffers are not counted — an approximation.
  def allocation_pass(wl, workers)
    s = wl.spec
    ops = s.fetch("allocation_ops", DEFAULT_ALLOCATION_OPS)
    workers.each(&:start_pass)
    GC.disable
    before = GC.stat
    threads = workers.each_with_index.map do |w, i|
      Thread.new { w.phase(false, 0, share(ops, workers.size, i)) }
    end
    threads.each(&:join)
    after = GC.stat
    GC.enable
    objects = after[:total_allocated_objects] - before[:total_allocated_objects]
    malloced = after[:malloc_increase_bytes] - before[:malloc_increase_bytes]
    { "bytes_per_op" => [objects * RVALUE_SIZE + malloced, 0].max.to_f / ops, "ops" => ops,
      "calls" => pass_calls(s, workers), "exact" => false,
      "method" => "GC.stat over an untimed pass after the measured window, GC disabled: " \
                  "total_allocated_objects x #{RVALUE_SIZE} B slots + malloc_increase_bytes' growth " \
                  "(the transient heap's array and hash buffers not counted)" }
  end

  def pass_calls(spec, workers)
    calls = spec["commands"].to_h { |c| [c["command"], workers.sum { |w| w.pass[OPS.index(c["command"])] }] }
    calls["MULTI"] = calls["EXEC"] = workers.sum(&:pass_tx) if spec["transaction"]
    calls
  end

  def merge(wl, workers, measure_start)
    res = { "format" => "kvperf-client-result", "version" => 1, "client" => nil, "duration_s" => 0.0,
            "warmup" => {}, "commands" => {}, "transactions" => 0, "first_error" => nil, "allocations" => nil }
    wl.spec["commands"].each do |c|
      op = OPS.index(c["command"])
      h = Histogram.new
      workers.each { |w| h.merge(w.hist[op]) }
      ops = workers.sum { |w| w.ops[op] }
      failed = workers.sum { |w| w.failed[op] }
      res["commands"][c["command"]] = { "ops" => ops, "errors" => failed, "histogram" => h.encode }
      res["warmup"][c["command"]] = workers.sum { |w| w.warm[op] }
    end
    warm_tx = workers.sum(&:warm_tx)
    res["warmup"]["MULTI"] = warm_tx
    res["warmup"]["EXEC"] = warm_tx
    res["transactions"] = workers.sum(&:tx)
    res["first_error"] = workers.map(&:first_error).compact.first
    end_us = ([measure_start] + workers.map(&:end_us)).max
    res["duration_s"] = (end_us - measure_start) / 1e6
    res
  end

  def fail(code, msg)
    $stderr.puts(msg.to_s.lines.first.to_s.chomp)
    exit(code)
  end

  # main(client) { |workload| [conn per worker] }: conn answers call(op, key) and
  # batch(ops, keys, n, tx, errs). The block raises Refusal for a spec it cannot honour.
  def main(client)
    fail(2, "usage: harness.rb SPEC.json") unless ARGV.size == 1
    wl = Workload.new(load_spec(ARGV[0]))
    conns = begin
      yield wl
    rescue Refusal
      raise
    rescue StandardError => e
      ep = wl.spec["endpoint"]
      fail(1, "cannot reach #{ep['host']}:#{ep['port']}: #{e.message}")
    end
    Thread.report_on_exception = false
    res = begin
      run_workers(wl, conns)
    rescue StandardError => e
      ep = wl.spec["endpoint"]
      fail(1, "lost the server #{ep['host']}:#{ep['port']}: #{e.class}: #{e.message}")
    end
    res["client"] = client
    $stdout.write(JSON.generate(res) + "\n")
  rescue Refusal => e
    fail(2, e.message)
  end
end
