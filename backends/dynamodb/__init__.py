"""DynamoDB backend (Amazon DynamoDB, DynamoDB Local or another emulator) through boto3.

``adapter`` holds the adapter, ``statements`` the items, keys and conditions rows become, ``batch``
the batch reads and writes in API-sized chunks, ``transaction`` the limits and actions of the one
request that stores a commit and moves its branch, ``schema`` creating and checking the tables,
``config`` URL and option parsing and the boto3 clients, ``errors`` botocore's errors mapped to
lochkit's, ``capabilities`` what the backend declares and ``factory`` the entry point. Only the
adapter imports boto3, and only the factory imports the adapter, when one is created.
"""

from backends.dynamodb.factory import DynamoBackendFactory

__all__ = ["DynamoBackendFactory"]
