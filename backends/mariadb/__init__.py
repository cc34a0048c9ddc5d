"""MariaDB and MySQL backend, through PyMySQL.

``adapter`` holds the adapter, ``statements`` every SQL statement per layout, ``schema`` creating
and checking the tables, ``config`` URL and option parsing, ``errors`` the driver's errors mapped to
lochkit's, ``pool`` the connection pool and ``factory`` the entry point. PyMySQL is imported only
when an adapter is created.
"""

from backends.mariadb.factory import MariadbBackendFactory

__all__ = ["MariadbBackendFactory"]
