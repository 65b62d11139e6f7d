import Foundation

/// A point on Earth in WGS-84 degrees.
public struct Coordinate: Hashable, Sendable, Codable, CustomStringConvertible, Validating {
    /// Degrees north, -90 ... 90.
    public var latitude: Double
    /// Degrees east, -180 ... 180.
    public var longitude: Double

    /// Creates a coordinate without checking it; call ``validate()`` for untrusted input.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Creates a coordinate, throwing when either value is out of range or not finite.
    public init(validatingLatitude latitude: Double, longitude: Double) throws(ValidationError) {
        self.init(latitude: latitude, longitude: longitude)
        try validate()
    }

    /// Mean Earth radius in metres (IUGG).
    public static let earthRadius = 6_371_008.8

    /// Checks both ranges and reports every problem.
    public func validate() throws(ValidationError) {
        var c = IssueCollector("Coordinate")
        c.check(latitude.isFinite && (-90...90).contains(latitude), "latitude", "must be between -90 and 90 degrees")
        c.check(
            longitude.isFinite && (-180...180).contains(longitude), "longitude", "must be between -180 and 180 degrees")
        try c.finish()
    }

    /// Great-circle distance in metres (haversine).
    public func distance(to other: Coordinate) -> Double {
        let lat1 = latitude * .pi / 180
        let lat2 = other.latitude * .pi / 180
        let dLat = (other.latitude - latitude) * .pi / 180
        let dLon = (other.longitude - longitude) * .pi / 180
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(lat1) * cos(lat2) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * Self.earthRadius * asin(min(1, sqrt(a)))
    }

    /// `52.520008,13.404954`.
    public var description: String { "\(latitude),\(longitude)" }
}
