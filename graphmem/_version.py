"""graphmem's version, where every part of the package can read it without importing the
package's public face (which would make a low module depend on the top)."""

__version__ = "0.1.0"
