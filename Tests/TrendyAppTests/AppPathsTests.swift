import Foundation
import Testing

@testable import TrendyApp

struct AppPathsTests {
    @Test func flagWinsOverEnvironment() {
        let p = AppPaths.resolve(flag: "/tmp/a", environment: ["TRENDY_DATA_DIR": "/tmp/b", "HOME": "/home/u"])
        #expect(p.dataDirectory.path == "/tmp/a")
    }

    @Test func environmentWinsOverXDG() {
        let p = AppPaths.resolve(flag: nil, environment: ["TRENDY_DATA_DIR": "/tmp/b", "XDG_DATA_HOME": "/x"])
        #expect(p.dataDirectory.path == "/tmp/b")
    }

    @Test func xdgDataHomeIsUsed() {
        let p = AppPaths.resolve(flag: nil, environment: ["XDG_DATA_HOME": "/x/data", "HOME": "/home/u"])
        #expect(p.dataDirectory.path == "/x/data/trendy")
    }

    @Test func relativeXDGIsIgnoredPerSpec() {
        let p = AppPaths.resolve(flag: nil, environment: ["XDG_DATA_HOME": "rel", "HOME": "/home/u"])
        #expect(p.dataDirectory.path == "/home/u/.local/share/trendy")
    }

    @Test func tildeExpands() {
        let p = AppPaths.resolve(flag: "~/trendy-data", environment: ["HOME": "/home/u"])
        #expect(p.dataDirectory.path == "/home/u/trendy-data")
    }
}
