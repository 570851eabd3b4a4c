"""The test suite; its folders mirror the packages of `metanim` (see docs/testing.md)."""
