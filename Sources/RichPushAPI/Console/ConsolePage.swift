import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RichPushCore

/// The console's page frame and its answers: every page is whole HTML made on the server, with
/// one stylesheet and one script from this origin and nothing else (the policy below).
enum ConsolePage {
    /// Nothing but this origin's script, style and live stream; no inline script, frames,
    /// plugins, or forms posting elsewhere.
    static let policy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "connect-src 'self'",
        "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    static func layout(title: String, session: ConsoleSession?, readOnly: Bool = false, body: HTML) -> HTML {
        let frame = frame(title: title, session: session, readOnly: readOnly)
        return "\(frame.opening)\(body)\(frame.closing)"
    }

    /// The page around its body, in two parts: a page written as it goes (``ConsoleBulkAction``)
    /// sends the opening first and the closing last.
    static func frame(title: String, session: ConsoleSession?, readOnly: Bool = false) -> (opening: HTML, closing: HTML) {
        var navigation: HTML = ""
        if let session {
            var links: [HTML] = [
                #"<a href="/console">Overview</a>"#, #"<a href="/console/queues">Queues</a>"#,
                #"<a href="/console/dead-letters">Dead letters</a>"#,
                #"<a href="/console/notifications">Notifications</a>"#, #"<a href="/console/devices">Devices</a>"#,
                #"<a href="/console/webhooks">Webhooks</a>"#, #"<a href="/console/test-send">Test send</a>"#,
                #"<a href="/console/templates">Templates</a>"#,
            ]
            if session.access.role >= .admin { links.append(#"<a href="/console/audit">Audit log</a>"#) }
            navigation = """
                <nav aria-label="Console"><span class="brand">RichPush</span> \(links)
                <form method="post" action="/console/logout" class="signout"><span class="who">\(session.user) · \(session.access.role.rawValue)\(session.access.apps.map { " · " + $0.joined(separator: ", ") } ?? "")</span>
                <button type="submit">Sign out</button></form></nav>
                """
        }
        let banner: HTML = readOnly ? #"<p class="banner" role="status">Read-only: this console takes no actions.</p>"# : ""
        let opening: HTML = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · RichPush console</title><link rel="stylesheet" href="/console/console.css"><script src="/console/console.js" defer></script></head>
            <body><header>\(navigation)</header>\(banner)<main id="main">

            """
        return (opening, "\n</main></body></html>")
    }

    static func response(_ html: HTML, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var headers = securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html.text)))
    }

    static func json(_ object: Any, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var headers = securityHeaders
        headers[.contentType] = "application/json; charset=utf-8"
        headers.append(contentsOf: extra)
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func redirect(to location: String, headers extra: HTTPFields = [:]) -> Response {
        var headers = securityHeaders
        headers[.location] = location
        headers.append(contentsOf: extra)
        return Response(status: .seeOther, headers: headers)
    }

    static var securityHeaders: HTTPFields {
        [
            .contentSecurityPolicy: policy, .xContentTypeOptions: "nosniff", DevicePageRoutes.referrerPolicy: "same-origin",
            DevicePageRoutes.crossOriginOpenerPolicy: "same-origin", .crossOriginResourcePolicy: "same-origin", .cacheControl: "no-store",
        ]
    }

    /// A browser's navigation (HTML wanted) rather than a script's call (JSON).
    static func wantsHTML(_ request: Request) -> Bool {
        let accept = request.headers[values: .accept].joined(separator: ",").lowercased()
        return accept.contains("text/html")
    }

    /// A count as people read it: 100,000.
    static func number(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// A time as ISO 8601 in UTC, to the second.
    static func time(_ milliseconds: Int64) -> String {
        guard milliseconds > 0 else { return "-" }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000).formatted(.iso8601)
    }

    /// A duration as people read it: 850 ms, 4.2 s, 3 min, 2 h.
    static func age(_ milliseconds: Int) -> String {
        switch milliseconds {
        case ..<1: "-"
        case ..<1000: "\(milliseconds) ms"
        case ..<60_000: String(format: "%.1f s", Double(milliseconds) / 1000)
        case ..<3_600_000: "\(milliseconds / 60_000) min"
        default: String(format: "%.1f h", Double(milliseconds) / 3_600_000)
        }
    }
}
