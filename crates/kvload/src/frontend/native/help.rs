//! help: `kvload --help`.

pub const HELP: &str = "\
Usage: kvload [OPTIONS] [COMMAND ARGS...]
       kvload memtier [memtier_benchmark OPTIONS]   (memtier front end: kvload memtier --help)

Options (same meaning as valkey-benchmark unless noted):
 -h <hostname>      Server hostname (default 127.0.0.1)
 -p <port>          Server port (default 6379)
 -s <socket>        Server socket (overrides host and port)
 -a <password>      Password for AUTH (default: $KVLOAD_AUTH, which `ps` does not show)
 --user <username>  Send ACL style 'AUTH username pass'. Needs -a.
 -u <uri>           valkey://user:password@host:port/dbnum (valkeys:// or rediss:// for TLS)
 -c <clients>       Number of parallel connections (default 50)
 -n <requests>      Total number of requests (default 100000)
 --duration <sec>   Run each test for this many seconds instead of -n requests
 --warmup <sec>     Run the workload this long first; excluded from results
 -d <size>          Data size of SET/GET value in bytes (default 3)
 --dbnum <db>       SELECT the specified db number (default 0)
 -3                 Start sessions in RESP3 protocol mode (HELLO 3)
 --threads <num>    Number of event-loop threads (default 1)
 --cluster          Enable cluster mode ({tag} keys per node; plain keys routed by slot)
 --read-from-replicas <no|yes|all>  (also --rfr) Where read tests go: no = primaries
                    (default), yes = replicas only, all = primaries and replicas. A test
                    is a read test when the server flags all its commands readonly;
                    others go to the primaries. Replicas: CLUSTER NODES with --cluster
                    (READONLY sent first), else the primary's online replicas (INFO)
 --enable-tracking  Send CLIENT TRACKING on before starting the benchmark
 -k <boolean>       1=keep alive 0=reconnect (default 1)
 -r <keyspacelen>   Replace __rand_int__ with a 12-digit number in 0..keyspacelen-1
 --sequential       __rand_int__ goes 0..keyspacelen-1 in order instead of at random
 --key-distribution <d>  How __rand_int__ is drawn: uniform (default), sequential,
                    zipf:S, gaussian:MEAN:SD (fractions of -r), hotset:KEYS:SHARE
                    (that fraction of the keys takes that share of the requests)
 --value-size <s>   Value sizes drawn per request instead of -d: 64, 64-1024,
                    64:3,1024:1 (weighted), 1-100:5,101-1000:4 (a histogram)
 --value-content <c>  random (default: printable) or compressible:R (zlib ratio ~R)
 --ttl <t>          EX on every SET: none (default), SECONDS or LOW-HIGH (drawn)
 --command-file <f> Lines of WEIGHT COMMAND ARGS... run as one sequence in exactly
                    those shares (weights reduced; each command its own keys); __key__,
                    __key2__ (a second key), __fields:N__, __field_values:N__, __data__
 --independent-keys In a sequence, every __rand_int__ of every command draws its own value
 -P <numreq>        Pipeline <numreq> requests (default 1)
 --rps <rate>       Open loop: total target requests/second (coordinated-omission corrected)
 --arrivals <kind>  Open loop's send times: uniform (an even grid per connection, default)
                    or poisson (exponential gaps: Poisson arrivals, as queueing theory has them)
 -q                 Quiet. Just show query/sec values
 --precision <n>    HDR histogram significant figures (default 3)
 --csv              Output in CSV format
 --dataset <csv>    Rows of this CSV (header line: column names) fill the command's
                    __field:NAME__ placeholders, one row per request: in file order with
                    --sequential, else drawn at random (--seed); -r still sets __rand_int__
 --json <file>      Also write versioned JSON results (with HDR histograms) to <file>
 --io <uring|epoll> Event loop (default: io_uring when the kernel allows it, else epoll
                    with a note). TLS always runs on epoll. The loop used is in the JSON
 --reconnect-on-error  A lost connection (in-flight requests counted as errors of kind
                    connection) or an error reply LOADING/MASTERDOWN/READONLY/CLUSTERDOWN/
                    TRYAGAIN reconnects after a doubling backoff instead of ending the run
                    (with --duration; epoll; --cluster: to the new slot owner). READONLY/MASTERDOWN or a refused
                    connection move on to the next node of --fallback
 --reconnect-backoff-ms <ms>  First backoff (default 100; doubles to 8x)
 --fallback <host:port,...>   Nodes to try after -h/-p (a replica that may be promoted)
 --ack-log <file>   With --reconnect-on-error and a custom command: write the key (first
                    argument) of every acknowledged command, one a line (lost-write checks)
 --clients-start <n> --clients-step <n> --step-duration <sec>
                    Staircase (memtier's ramp): start with n connections, add n more every
                    <sec> seconds up to -c; the last step runs to the end of --duration
                    (required). Each step is measured on its own (JSON: staircase)
 -l                 Loop. Run the tests forever
 -t <tests>         Comma separated list of tests: ping_inline ping_mbulk set get incr
                    lpush rpush lpop rpop sadd hset spop zadd zpopmin lrange_100
                    lrange_300 lrange_500 lrange_600 mset mget xadd (or ping, lrange)
 --seed <num>       Seed of the key generator: same seed => same key sequence
 --tls              Establish a secure TLS connection
 --sni <host>       Server name indication for TLS
 --cacert <file>    CA Certificate file to verify with
 --cacertdir <dir>  Directory with trusted CA certificates (*.pem, *.crt)
 --insecure         Skip server certificate verification
 --cert <file>      Client certificate to authenticate with
 --key <file>       Private key file to authenticate with
 --help             Output this help and exit
 --version          Output version and exit

Custom commands: arguments after the options form the command. Placeholders:
 __rand_int__  12-digit random number (with -r), different for each occurrence in a
               command; in a sequence, the k-th occurrence of every command shares a value
 __data__      a value of -d bytes
 {tag}         cluster hash tag chosen so the key maps to the connection's node
A standalone ';' argument separates commands of a sequence sent together, e.g.
   kvload -r 1000 SET a:__rand_int__ __data__ ';' GET a:__rand_int__
A single argument containing spaces is split into words (double quotes group):
   kvload -r 1000 \"SET a:__rand_int__ x ; GET a:__rand_int__\"
Each command of a sequence counts as one request. With --independent-keys each command
of a sequence draws its own keys (a read-heavy mix reads 10 keys, not one key 10 times).
";
