import Foundation
import HeraldPush
import HeraldStore

/// What the dashboard shows, gathered by ``DashboardRoutes`` for one rendering.
struct DashboardData: Sendable {
    var now: Date
    var activity: ActivityRing.Snapshot
    var outbox: OutboxSummary
    var deadLetters: DeadLetterPage
    var heldReplies: Int
    var wakes: WakeTally.Counts = .init()
    var providers: [(platform: String, status: PushProviderStatus?)]
    var csrf: String
    /// A line to show once above the page (after a replay).
    var notice: (text: String, isError: Bool)?
}

/// The dashboard's HTML: one page, styled inline, readable from a phone's width up. Everything is
/// escaped through ``HTML/escape(_:)``; the one script (refreshing `<main>`) carries the
/// response's CSP nonce.
enum DashboardPage {
    static let deadLettersShown = 25

    static func render(_ data: DashboardData, nonce: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Herald · dashboard</title>
        <style>\(style)</style></head>
        <body>
        <header><h1>Herald</h1><span class="muted">operator dashboard</span>
        <form method="post" action="/admin/logout" class="logout"><input type="hidden" name="csrf" value="\(HTML.escape(data.csrf))"><button>Log out</button></form>
        </header>
        <main id="main">
        \(notice(data))
        \(figures(data))
        \(chart(data.activity))
        <div class="columns">
        \(outcomes(data.activity))
        \(outbox(data))
        \(providers(data))
        \(wakes(data.wakes))
        </div>
        \(deadLetters(data))
        <p class="muted small" id="updated">Updated \(HTML.escape(data.now.formatted(.iso8601))) · refreshes every 5 s</p>
        </main>
        <script nonce="\(nonce)">
        setInterval(async () => {
          if (document.hidden) return;
          try {
            const r = await fetch('/admin', {credentials: 'same-origin'});
            if (!r.ok || r.redirected) return;
            const page = new DOMParser().parseFromString(await r.text(), 'text/html');
            const fresh = page.getElementById('main');
            if (fresh) { fresh.querySelector('.notice')?.remove(); document.getElementById('main').replaceWith(fresh); }
          } catch (e) {}
        }, 5000);
        </script>
        </body></html>
        """
    }

    static func notice(_ data: DashboardData) -> String {
        guard let notice = data.notice else { return "" }
        return "<p class=\"notice\(notice.isError ? " error" : "")\" role=\"status\">\(HTML.escape(notice.text))</p>"
    }

    static func figure(_ label: String, _ value: String, id: String, detail: String = "") -> String {
        """
        <div class="figure"><div class="label">\(HTML.escape(label))</div><div class="value" id="\(id)">\(HTML.escape(value))</div>\
        <div class="detail">\(HTML.escape(detail))</div></div>
        """
    }

    static func figures(_ data: DashboardData) -> String {
        let total = data.activity.slots.reduce(into: (0, 0)) {
            $0.0 += $1.webhooks
            $0.1 += $1.pushes
        }
        var oldest = "none waiting"
        if let due = data.outbox.oldestDueAt {
            let wait = data.now.timeIntervalSince(due)
            oldest = wait >= 0 ? "oldest due \(HTML.age(wait)) ago" : "next due in \(HTML.age(-wait))"
        }
        return """
            <section class="figures">
            \(figure("Webhooks/s", HTML.rate(data.activity.webhooksPerSecond), id: "webhooks-rate", detail: "\(total.0) in 6 min"))
            \(figure("Pushes/s", HTML.rate(data.activity.pushesPerSecond), id: "pushes-rate", detail: "\(total.1) in 6 min"))
            \(figure("Queue", "\(data.outbox.total.total)", id: "queue-depth", detail: oldest))
            \(figure("Dead letters", "\(data.outbox.deadLetters)", id: "dead-letter-count", detail: "not replayed"))
            \(figure("Dead tokens", "\(data.outbox.deadTokens)", id: "dead-token-count", detail: "never pushed again"))
            \(figure("Held replies", "\(data.heldReplies)", id: "held-replies", detail: "requests waiting"))
            </section>
            """
    }

    /// Webhooks and pushes per second, per 10-second slot, as two lines.
    static func chart(_ activity: ActivityRing.Snapshot) -> String {
        let (width, height) = (360.0, 110.0)
        let slots = activity.slots
        let peak = max(1, slots.map { max($0.webhooks, $0.pushes) }.max() ?? 1)
        func points(_ field: KeyPath<ActivityRing.Point, Int>) -> String {
            slots.enumerated().map { index, slot in
                let x = Double(index) / Double(max(1, slots.count - 1)) * width
                let y = height - Double(slot[keyPath: field]) / Double(peak) * (height - 6) - 3
                return String(format: "%.1f,%.1f", x, y)
            }.joined(separator: " ")
        }
        let peakRate = HTML.rate(Double(peak) / Double(ActivityRing.slotSeconds))
        return """
            <section class="card"><h2>Last 6 minutes</h2>
            <svg class="chart" viewBox="0 0 \(Int(width)) \(Int(height))" preserveAspectRatio="none" role="img" aria-label="webhooks and pushes per second">
            <line x1="0" y1="3" x2="\(Int(width))" y2="3" class="grid"/><line x1="0" y1="\(Int(height) - 3)" x2="\(Int(width))" y2="\(Int(height) - 3)" class="grid"/>
            <polyline class="webhooks" points="\(points(\.webhooks))"/>
            <polyline class="pushes" points="\(points(\.pushes))"/>
            </svg>
            <div class="legend"><span class="key webhooks">webhooks/s</span><span class="key pushes">pushes/s</span>\
            <span class="muted">top line \(peakRate)/s · 10 s steps</span></div>
            </section>
            """
    }

    static func outcomes(_ activity: ActivityRing.Snapshot) -> String {
        var rows = ""
        for (provider, byOutcome) in activity.outcomes.sorted(by: { $0.key < $1.key }) {
            let total = byOutcome.values.reduce(0, +)
            var bar = ""
            var legend = ""
            for (outcome, count) in byOutcome.sorted(by: { $0.value > $1.value }) {
                let share = Double(count) / Double(max(total, 1)) * 100
                let css = HTML.escape(outcome)
                bar += "<span class=\"seg \(css)\" style=\"width:\(String(format: "%.2f", share))%\"></span>"
                legend += "<span class=\"key \(css)\">\(css) \(String(format: "%.0f", share))% (\(count))</span>"
            }
            rows +=
                "<div class=\"provider\"><div><b>\(HTML.escape(provider))</b> <span class=\"muted\">\(total) sends</span></div>"
                + "<div class=\"bar\">\(bar)</div><div class=\"legend\">\(legend)</div></div>"
        }
        if rows.isEmpty { rows = "<p class=\"muted\">No sends since the server started.</p>" }
        return "<section class=\"card\" id=\"outcomes\"><h2>Outcomes by provider</h2>\(rows)</section>"
    }

    static func outbox(_ data: DashboardData) -> String {
        var rows = ""
        let row = { (name: String, counts: OutboxCounts) in
            "<tr><td>\(HTML.escape(name))</td><td>\(counts.pending)</td><td>\(counts.leased)</td><td>\(counts.retrying)</td></tr>"
        }
        for (destination, counts) in data.outbox.byDestination.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            rows += row(destination.rawValue, counts)
        }
        rows += row("all", data.outbox.total).replacingOccurrences(of: "<tr>", with: "<tr class=\"total\">")
        return """
            <section class="card"><h2>Outbox</h2>
            <table><thead><tr><th></th><th>pending</th><th>leased</th><th>retrying</th></tr></thead><tbody>\(rows)</tbody></table>
            </section>
            """
    }

    /// Wakes by identity (the wake gateway) since the start: acks, and the fallbacks they spared.
    static func wakes(_ wakes: WakeTally.Counts) -> String {
        let acks = ["handled", "no_handler", "failed"].map { "<td>\(wakes.acks[$0, default: 0])</td>" }.joined()
        return """
            <section class="card" id="wakes"><h2>Wakes and NWC</h2>
            <table><tbody>
            <tr><td>wakes</td><td colspan="3">\(wakes.identityWakes) <span class="muted">(\(wakes.devicesWoken) devices)</span></td></tr>
            <tr><td></td><th>handled</th><th>no handler</th><th>failed</th></tr>
            <tr><td>acks</td>\(acks)</tr>
            <tr><td></td><th>scheduled</th><th>cancelled</th><th>sent</th></tr>
            <tr><td>fallbacks</td><td>\(wakes.fallbacksScheduled)</td><td>\(wakes.fallbacksCancelled)</td><td id="fallbacks-sent">\(wakes.fallbacksSent)</td></tr>
            <tr><td></td><th>forwarded</th><th>duplicates</th><th>refused</th></tr>
            <tr><td>NWC requests</td><td id="nwc-forwarded">\(wakes.nwc["forwarded", default: 0])</td><td>\(wakes.nwc["deduplicated", default: 0])</td><td>\(wakes.nwc["refused", default: 0])</td></tr>
            <tr><td>NWC relays</td><td colspan="3">\(wakes.nwcRelays) <span class="muted">held open</span></td></tr>
            </tbody></table>
            </section>
            """
    }

    static func providers(_ data: DashboardData) -> String {
        var rows = ""
        for (platform, status) in data.providers {
            guard let status else {
                rows += "<tr><td>\(HTML.escape(platform))</td><td colspan=\"3\" class=\"muted\">no provider configured</td></tr>"
                continue
            }
            let connection =
                status.openConnections.map { $0 > 0 ? "<span class=\"ok\">connected (\($0))</span>" : "<span class=\"idle\">not connected</span>" }
                ?? "<span class=\"muted\">no connection (in process)</span>"
            var token = "<span class=\"muted\">none used</span>"
            if status.usesToken {
                token =
                    status.tokenIssuedAt.map { "issued \(HTML.age(data.now.timeIntervalSince($0))) ago" }
                    ?? "<span class=\"muted\">not issued yet</span>"
            }
            rows += "<tr><td>\(HTML.escape(platform))</td><td>\(HTML.escape(status.name))</td><td>\(connection)</td><td>\(token)</td></tr>"
        }
        return """
            <section class="card"><h2>Providers</h2>
            <table><thead><tr><th></th><th>provider</th><th>connection</th><th>token</th></tr></thead><tbody>\(rows)</tbody></table>
            </section>
            """
    }

    static func deadLetters(_ data: DashboardData) -> String {
        var rows = ""
        for letter in data.deadLetters.letters {
            let id = HTML.escape(letter.id)
            let button =
                letter.tokenDead
                ? "<span class=\"muted\">token dead</span>"
                : """
                <form method="post" action="/admin/dead-letters/\(id)/replay"><input type="hidden" name="csrf" value="\(HTML.escape(data.csrf))">\
                <button class="replay" data-id="\(id)">Replay</button></form>
                """
            rows += """
                <tr class="dead-letter" data-id="\(id)"><td><code>\(id)</code><div class="muted small">\(HTML.escape(letter.notificationType))</div></td>\
                <td><span class="reason">\(HTML.escape(letter.reason))</span><div class="muted small">\(HTML.escape(letter.providerAnswer ?? "no answer"))</div></td>\
                <td>\(letter.destination.rawValue)<div class="muted small"><code>\(HTML.escape(PushTarget.shown(destination: letter.destination, token: letter.token)))</code></div></td>\
                <td>\(letter.attempts)</td><td>\(HTML.age(data.now.timeIntervalSince(letter.finishedAt))) ago</td><td>\(button)</td></tr>
                """
        }
        let more =
            data.outbox.deadLetters > data.deadLetters.letters.count
            ? "<p class=\"muted small\">Showing the newest \(data.deadLetters.letters.count) of \(data.outbox.deadLetters); the rest through <code>GET /api/v1/admin/dead-letters</code> or <code>herald dead-letters list</code>.</p>"
            : ""
        let body =
            rows.isEmpty
            ? "<p class=\"muted\" id=\"no-dead-letters\">No dead letters. Every push was delivered or is still on its way.</p>"
            : """
            <div class="scroll"><table id="dead-letters-table"><thead><tr><th>id</th><th>reason · last answer</th><th>device</th><th>tries</th><th>dead</th><th></th></tr></thead>
            <tbody>\(rows)</tbody></table></div>
            """
        return "<section class=\"card\" id=\"dead-letters\"><h2>Dead letters</h2>\(body)\(more)</section>"
    }

    static let style = """
        :root{--bg:#f6f7f9;--card:#fff;--ink:#1c2330;--muted:#6b7482;--line:#e3e6ea;--accent:#2f6fed;--accent2:#e0803a;--ok:#1f9d55;--bad:#d64545}
        @media (prefers-color-scheme:dark){:root{--bg:#11151b;--card:#1a2029;--ink:#e7eaee;--muted:#8d96a3;--line:#2a323d}}
        *{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
        header{display:flex;align-items:baseline;gap:.75rem;padding:.9rem 1.2rem;background:var(--card);border-bottom:1px solid var(--line)}
        header h1{margin:0;font-size:1.25rem}header .logout{margin-left:auto}
        main{max-width:1100px;margin:0 auto;padding:1rem}
        h2{font-size:1rem;margin:0 0 .6rem}
        .figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:.75rem;margin-bottom:1rem}
        .figure,.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:.8rem 1rem}
        .card{margin-bottom:1rem}.figure .label{color:var(--muted);font-size:.85rem}.figure .value{font-size:1.9rem;font-weight:650}
        .figure .detail{color:var(--muted);font-size:.8rem}
        .columns{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:0 1rem}
        .chart{width:100%;height:130px;display:block}.chart polyline{fill:none;stroke-width:2;vector-effect:non-scaling-stroke}
        .chart .webhooks{stroke:var(--accent)}.chart .pushes{stroke:var(--accent2)}.chart .grid{stroke:var(--line);vector-effect:non-scaling-stroke}
        .legend{display:flex;flex-wrap:wrap;gap:.3rem 1rem;font-size:.82rem;margin-top:.35rem}
        .key::before{content:"";display:inline-block;width:.7rem;height:.7rem;border-radius:2px;margin-right:.3rem;background:var(--muted);vertical-align:-1px}
        .key.webhooks::before{background:var(--accent)}.key.pushes::before{background:var(--accent2)}
        .bar{display:flex;height:.8rem;border-radius:4px;overflow:hidden;background:var(--line);margin:.3rem 0}.seg{background:var(--muted)}
        .seg.delivered,.key.delivered::before{background:var(--ok)}.seg.retry,.key.retry::before{background:#e6b422}
        .seg.token_dead,.key.token_dead::before{background:#8a63d2}.seg.permanent,.key.permanent::before{background:var(--bad)}
        .provider{margin-bottom:.7rem}
        table{width:100%;border-collapse:collapse;font-size:.9rem}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
        th{color:var(--muted);font-weight:500}tr.total td{font-weight:600}.scroll{overflow-x:auto}
        #wakes{grid-column:1/-1}#wakes table{table-layout:fixed}#wakes th,#wakes td{overflow-wrap:break-word}#wakes th{font-size:.75rem}
        .muted{color:var(--muted)}.small{font-size:.8rem}.ok{color:var(--ok)}.idle{color:var(--accent2)}
        .reason{font-weight:600;color:var(--bad)}code{font-size:.82rem}
        button{font:inherit;border:1px solid var(--line);background:var(--card);color:var(--ink);border-radius:7px;padding:.35rem .8rem;cursor:pointer}
        button.replay,button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
        .notice{background:#e8f5ec;color:#14532d;border-radius:8px;padding:.6rem .9rem}.notice.error{background:#fdecec;color:#7f1d1d}
        .login{max-width:360px;margin:12vh auto;padding:1.4rem}.login input{width:100%;font:inherit;padding:.5rem;margin:.4rem 0 .9rem;border:1px solid var(--line);border-radius:7px;background:var(--bg);color:var(--ink)}
        @media (max-width:560px){main{padding:.6rem}.figure .value{font-size:1.5rem}
        #dead-letters-table thead{display:none}#dead-letters-table td{border:0;padding:0}
        #dead-letters-table tr{display:grid;grid-template-columns:1fr auto;gap:.15rem .7rem;padding:.6rem 0;border-bottom:1px solid var(--line)}
        #dead-letters-table td:nth-child(-n+3){grid-column:1}#dead-letters-table td:nth-child(4),#dead-letters-table td:nth-child(5){display:none}
        #dead-letters-table td:nth-child(6){grid-column:2;grid-row:1/span 3;align-self:center}#dead-letters-table code{word-break:break-all}}
        """

    static func login(error: String?) -> String {
        let message = error.map { "<p class=\"notice error\" role=\"alert\">\(HTML.escape($0))</p>" } ?? ""
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Herald · log in</title><style>\(style)</style></head>
            <body><main><form class="card login" method="post" action="/admin/login">
            <h1>Herald</h1><p class="muted">Log in with an API key that has the <code>admin</code> scope (<code>herald keys create --scopes admin</code>).</p>
            \(message)
            <label for="key">Admin API key</label><input id="key" name="key" type="password" autocomplete="current-password" required>
            <button class="primary" type="submit">Log in</button></form></main></body></html>
            """
    }

    /// A short page for a refused form (expired session, bad CSRF token).
    static func refusal(_ text: String) -> String {
        """
        <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Herald</title><style>\(style)</style></head><body><main><div class="card login"><p>\(HTML.escape(text))</p>
        <p><a href="/admin">Back to the dashboard</a></p></div></main></body></html>
        """
    }
}
