// Package resptest checks Strata's RESP replies against a real
// redis-server 7, byte for byte.
//
// StartRedis starts a private redis-server; Conn is a raw RESP client that
// returns each reply as the exact bytes the server sent; Format prints a
// reply as redis-cli would; RunScript runs a script of commands on Strata
// and on Redis side by side and reports every reply that differs.
//
// # Invariants
//
//  1. A reply is compared as bytes. The only relaxations are the ones a
//     script line asks for with a prefix (below), and even then error
//     replies, reply kinds and nullness are compared exactly.
//  2. Conn reads exactly one frame per reply, strictly: a frame that is
//     malformed (a bad length, a missing CRLF, an unknown type byte) is an
//     error, never skipped or repaired. An attribute frame is read together
//     with the reply it annotates, as one.
//  3. Each script runs on one new connection per server, after FLUSHALL on
//     both, so scripts do not depend on each other or on their order.
//  4. Both servers get every command of a script, in order, from one
//     goroutine; Strata first, then Redis.
//
// # Script format
//
// Scripts live in resp/testdata/*.txt. One command per line:
//
//	# a comment line; blank lines are ignored
//	SET greeting "hello\r\nworld"
//	GET greeting
//	unordered SMEMBERS s
//	sleep 150
//
// Arguments are split as redis-cli splits them: separated by spaces; in
// double quotes the escapes \n \r \t \b \a \" \\ and \xHH (two hex digits)
// work and any other \c is c; in single quotes only \' is an escape; a
// closing quote must be followed by a space or the end of the line. A '#'
// starts a comment only at the start of a line. A line may begin with one
// prefix, a lowercase word followed by a space, that changes how the
// replies to its command are compared:
//
//	unordered CMD...        the reply is an aggregate whose elements are
//	                        compared as a multiset (SMEMBERS, KEYS); a
//	                        RESP3 map's key/value pairs are the elements
//	unordered-pairs CMD...  the reply is a flat array field, value, field,
//	                        value... compared as a multiset of pairs
//	                        (HGETALL, CONFIG GET)
//	len CMD...              compare the reply's kind and nullness, an
//	                        aggregate's length, an integer's value; not
//	                        strings or elements (SRANDMEMBER, SPOP)
//	typeonly CMD...         compare the reply's kind and nullness only
//	                        (PTTL, whose value depends on timing)
//	scan CMD...             CMD is SCAN, SSCAN, HSCAN or ZSCAN; its reply
//	                        [cursor, [elements]] must have cursor "0" on
//	                        both servers (use a large COUNT) and the
//	                        elements are compared as a multiset
//	noreply-compare CMD...  run on both, compare nothing (TIME, INFO)
//
// and one directive:
//
//	sleep N                 wait N milliseconds (for expiry)
//
// A quoted first word is never a prefix ("len" is a command named len).
// "scan" is a prefix only before a SCAN-family command; before anything
// else it is the SCAN command itself ("scan 0" runs SCAN 0).
//
// Set STRATA_RESPTEST_TRACE=1 to log every command with both replies.
package resptest
