import CoreMetrics
import Foundation
import Prometheus

/// What an operator watches, recorded with swift-metrics and served in Prometheus' text format
/// at `GET /metrics`. Each server has its own registry and factory (no process-wide
/// `MetricsSystem.bootstrap`: several servers may run in one process, as the tests do).
///
/// | Metric | Kind | Labels |
/// |---|---|---|
/// | `trendy_http_requests_total` | counter | `method`, `route` (the template), `status` |
/// | `trendy_http_request_duration_seconds` | histogram | `method`, `route` |
/// | `trendy_batch_events` | histogram | — (events per `POST /events/batch`) |
/// | `trendy_feed_page_changes` | histogram | — (changes per `GET /changes` page) |
/// | `trendy_feed_delivery_lag_seconds` | histogram | — (age of a page's newest change when read) |
/// | `trendy_rate_limited_total` | counter | `scope` (`api` per user, `auth` per address) |
/// | `trendy_db_pool_connections` | gauge | `state` (`in_use`, `max`; PostgreSQL only) |
/// | `trendy_database_up` | gauge | — (1 when the last readiness check reached the database) |
public final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    /// A registry with the buckets the server's values need.
    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.valueHistogramBuckets["trendy_batch_events"] = [1, 5, 10, 50, 100, 250, 500, 1_000]
        factory.valueHistogramBuckets["trendy_feed_page_changes"] = [0, 1, 10, 50, 100, 250, 500, 1_000]
        factory.valueHistogramBuckets["trendy_feed_delivery_lag_seconds"] = [
            0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60, 300, 3_600, 86_400,
        ]
        factory.durationHistogramBuckets["trendy_http_request_duration_seconds"] = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .milliseconds(2_500), .seconds(5), .seconds(10),
        ]
        self.factory = factory
    }

    /// One answered request.
    func request(method: String, route: String, status: Int, duration: Duration) {
        Counter(
            label: "trendy_http_requests_total",
            dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory
        ).increment()
        Timer(
            label: "trendy_http_request_duration_seconds", dimensions: [("method", method), ("route", route)],
            factory: factory
        ).recordNanoseconds(
            duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// One batch of `count` events.
    func batch(_ count: Int) {
        Recorder(label: "trendy_batch_events", factory: factory).record(count)
    }

    /// One feed page of `count` changes, the newest written at `newest`.
    func feedPage(_ count: Int, newest: Date?, now: Date) {
        Recorder(label: "trendy_feed_page_changes", factory: factory).record(count)
        if let newest {
            Recorder(label: "trendy_feed_delivery_lag_seconds", factory: factory)
                .record(max(0, now.timeIntervalSince(newest)))
        }
    }

    /// One request refused by a rate limit.
    func rateLimited(_ scope: String) {
        Counter(label: "trendy_rate_limited_total", dimensions: [("scope", scope)], factory: factory).increment()
    }

    /// The Prometheus text exposition, with the gauges read now.
    func exposition(pool: (inUse: Int, capacity: Int)?, databaseUp: Bool) -> [UInt8] {
        if let pool {
            Gauge(label: "trendy_db_pool_connections", dimensions: [("state", "in_use")], factory: factory)
                .record(pool.inUse)
            Gauge(label: "trendy_db_pool_connections", dimensions: [("state", "max")], factory: factory)
                .record(pool.capacity)
        }
        Gauge(label: "trendy_database_up", factory: factory).record(databaseUp ? 1 : 0)
        return registry.emitToBuffer()
    }
}
