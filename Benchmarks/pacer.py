"""Paced webhook load for herald-bench's latency phase, in its own process.

Sends RATE webhooks per second for SECONDS over CONNECTIONS keep-alive HTTP/1.1 connections.
Each swap id carries the CLOCK_MONOTONIC nanosecond at which its request was written, so the
bench can measure webhook -> APNs request latency without its own load client sharing the NDS's
CPU. Prints "sent N ok M".

When PATH contains "{token}", each request gets a fresh 64-hex device token instead: its index
and the wall-clock nanosecond it was written (time.time_ns), so fastpath.py can match the
APNs sink's log (which records the token in the URI and the arrival time) to the webhook.
"""
import asyncio
import sys
import time


async def main(host, port, path, rate, seconds, connections):
    idle = asyncio.Queue()
    ok = 0
    readers = []

    async def reader(conn_reader, conn_writer):
        nonlocal ok
        while True:
            status = await conn_reader.readline()
            if not status:
                return
            length = 0
            while True:
                line = await conn_reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if length:
                await conn_reader.readexactly(length)
            if status.split(b" ")[1] == b"200":
                ok += 1
            idle.put_nowait(conn_writer)

    for _ in range(connections):
        r, w = await asyncio.open_connection(host, port)
        readers.append(asyncio.create_task(reader(r, w)))
        idle.put_nowait(w)

    count = rate * seconds
    start = time.monotonic()
    for i in range(count):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        w = await idle.get()
        body = '{"event":"swap.update","data":{"id":"lat-%d-%d","status":"transaction.mempool"}}' % (
            i, time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        target = path.replace("{token}", "%016x%016x%032x" % (i, time.time_ns(), 0xbe)) if "{token}" in path else path
        w.write(("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                 % (target, host, len(body), body)).encode())
    deadline = time.monotonic() + 30
    while idle.qsize() < connections and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    print("sent %d ok %d" % (count, ok), flush=True)
    for task in readers:
        task.cancel()


if __name__ == "__main__":
    host, port, path, rate, seconds, connections = sys.argv[1:7]
    asyncio.run(main(host, int(port), path, int(rate), int(seconds), int(connections)))
