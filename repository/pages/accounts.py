"""(being written)"""

from flask import Blueprint

bp = Blueprint("accounts", __name__)
