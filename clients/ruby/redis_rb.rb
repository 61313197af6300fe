# frozen_string_literal: true

# The redis-rb (4.x) connection shared by the redis-rb and redis-rb-hiredis harnesses; only the
# driver differs (:ruby or :hiredis). Models: single, and pool = workers threads with one
# connection each (redis-rb has no pool of its own). No async.
require "redis"
require_relative "kit"

module KvperfHarness
  # One worker's redis-rb connection.
  class RedisRbConn
    def initialize(redis, value)
      @r = redis
      @value = value
    end

    def call(op, key)
      case op
      when SET then @r.set(key, @value)
      when GET then @r.get(key)
      else @r.incr(key)
      end
    end

    def batch(ops, keys, n, tx, errs)
      block = proc do |p|
        n.times do |j|
          case ops[j]
          when SET then p.set(keys[j], @value)
          when GET then p.get(keys[j])
          else p.incr(keys[j])
          end
        end
      end
      replies = tx ? @r.multi(&block) : @r.pipelined(&block)
      n.times { |j| errs[j] = replies.nil? ? Refusal.new("transaction aborted") : nil }
    rescue Redis::CommandError => e
      n.times { |j| errs[j] = e }
    end
  end

  module_function

  def redis_options(wl, driver)
    ep = wl.spec["endpoint"]
    opts = { host: ep["host"], port: ep["port"], driver: driver, connect_timeout: 5, timeout: 10,
             reconnect_attempts: 0 }
    opts[:password] = wl.password if wl.password && !wl.password.empty?
    if ep["tls"]
      raise Refusal, "TLS is not supported by redis-rb's hiredis driver" if driver == :hiredis

      opts[:ssl] = true
      params = {}
      params[:ca_file] = ep["ca_file"] if ep["ca_file"]
      params[:cert] = OpenSSL::X509::Certificate.new(File.read(ep["cert_file"])) if ep["cert_file"]
      params[:key] = OpenSSL::PKey.read(File.read(ep["key_file"])) if ep["key_file"]
      opts[:ssl_params] = params
    end
    opts
  end

  def redis_rb_main(name, driver)
    library = driver == :hiredis ? "redis-rb+hiredis" : "redis-rb"
    runtime = "ruby #{RUBY_VERSION}"
    runtime += " +YJIT" if defined?(RubyVM::YJIT) && RubyVM::YJIT.enabled?
    runtime += " (hiredis #{Hiredis::VERSION})" if driver == :hiredis
    client = { "name" => name, "library" => library, "version" => Redis::VERSION, "language" => "ruby",
               "runtime" => runtime }
    main(client) do |wl|
      model = wl.spec["concurrency"]["model"]
      raise Refusal, "concurrency model #{model} is not supported by #{name}" unless %w[single pool].include?(model)

      opts = redis_options(wl, driver)
      Array.new(wl.spec["concurrency"]["workers"]) do
        r = Redis.new(**opts)
        r.ping
        RedisRbConn.new(r, wl.value)
      end
    end
  end
end
