// Package resp is Strata's Redis front end: a RESP server with its own
// command reader (reader.go), a command table, and the handlers that turn
// commands into keyspace calls. Replies are built with redcon's append
// helpers.
//
// Invariants:
//
//  1. Every command is a row of the command table (name, arity, flags, key
//     positions, handler). The dispatcher alone checks existence, arity,
//     authentication, MULTI queueing and subscriber mode, with Redis's own
//     error texts (errors.go); handlers only parse their options.
//  2. Under appendfsync always (the default) no reply to a write command
//     leaves the server before the write is durable: a connection buffers a
//     pipeline's replies and sends them after one wait for the newest
//     write it made (the WAL acknowledges in order), or hands them to the
//     server's replier, which does the same wait for them (replier.go);
//     a connection's replies leave in the order of its commands either way,
//     though its next pipeline may run before the last one's are sent.
//     If that wait fails, the replies from the first write on are replaced
//     by errors.
//  3. A command's changes are one engine batch; EXEC's are one batch for
//     the whole transaction, and no other client sees part of it.
//  4. A client over a limit (bulk length, multibulk length, inline size,
//     query buffer, clients) gets Redis's error and is closed; every other
//     client is unaffected.
//  5. Blocked clients (BLPOP and friends) are woken by the writes to the
//     keys they wait on, in the order they blocked, and a client that went
//     away while blocked takes nothing from the list.
//  6. A command other than AUTH, HELLO, QUIT and RESET runs only for an
//     authenticated client or while no password is set; with protected
//     mode on and no password, a client not on the loopback interface is
//     refused before it can send anything. A password never leaves the
//     server in SLOWLOG or MONITOR output.
//  7. A command's arguments are slices of its connection's read buffer,
//     valid until the connection reads its next command: anything that
//     outlives the command (MULTI's queue, SLOWLOG) copies them.
package resp
