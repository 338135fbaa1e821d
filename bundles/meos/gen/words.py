"""The words of MEOS function names, read as a user would say them.

A MEOS C name is made of parts: the types it takes (tfloat, tstzspan, stbox),
and what it does with them (max_value, at, minus, cumulative_length). TYPES
says what each type is in users' terms, OPS what each operation does, with
the other words people use for it; describe.py puts them together. Written
for this bundle from what the functions compute, not taken from any
documentation.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    """A type named in a function's name."""

    # The type with its article, as a sentence uses it ("a temporal float").
    noun: str
    # What the type is, in the words of its users; said once per description.
    gloss: str = ""


_TEMPORAL = "a value that changes over time (a time series)"
_MOVING = ("a moving object: its positions over time, a trajectory, track, trip or route "
           "of a vehicle (car, bus, truck, taxi, ship, boat, aircraft, drone, bike), a person or an "
           "animal")
_SPATIAL_GLOSS = "a temporal point or geometry, " + _MOVING.split(": ", 1)[1]

TYPES: dict[str, Kind] = {
    # Temporal types.
    "temporal": Kind("a temporal value", _TEMPORAL),
    "tbool": Kind("a temporal boolean", "true or false over time (a flag that changes)"),
    "tint": Kind("a temporal integer", "a whole number that changes over time (an integer time "
                 "series, counts over time)"),
    "tfloat": Kind("a temporal float", "a number that changes over time (a numeric time series, "
                   "e.g. a temperature, speed or altitude over time)"),
    "tnumber": Kind("a temporal number", "an integer or float that changes over time (a numeric "
                    "time series)"),
    "ttext": Kind("a temporal text", "a text or string that changes over time"),
    "tpoint": Kind("a moving point", _MOVING),
    "tgeompoint": Kind("a moving point", _MOVING + ", in planar coordinates"),
    "tgeogpoint": Kind("a moving geographic point", _MOVING + ", in longitude and latitude"),
    "tgeo": Kind("a moving object", _SPATIAL_GLOSS),
    "tspatial": Kind("a moving object", _SPATIAL_GLOSS),
    "tgeometry": Kind("a temporal geometry", "a shape or region that moves or changes over time"),
    "tgeography": Kind("a temporal geography", "a shape on the earth that moves or changes over "
                       "time"),
    "tnpoint": Kind("a moving point on a road network", "a vehicle moving along the routes of "
                    "a road network: a trip on the network"),
    "tinstant": Kind("a temporal instant", "one value at one time"),
    "tsequence": Kind("a temporal sequence", "values over one continuous period"),
    "tsequenceset": Kind("a temporal sequence set", "values over several periods, with gaps"),
    # Instants and sequences built by constructors.
    "tboolinst": Kind("a temporal boolean instant", "one true or false value at one time"),
    "tintinst": Kind("a temporal integer instant", "one integer at one time"),
    "tfloatinst": Kind("a temporal float instant", "one float at one time"),
    "ttextinst": Kind("a temporal text instant", "one text at one time"),
    "tpointinst": Kind("a moving point instant", "one position at one time"),
    "tgeoinst": Kind("a temporal geometry instant", "one geometry at one time"),
    "tnpointinst": Kind("a network point instant", "one position on a road network at one time"),
    "tboolseq": Kind("a temporal boolean sequence", "true or false over a period"),
    "tintseq": Kind("a temporal integer sequence", "an integer over a period"),
    "tfloatseq": Kind("a temporal float sequence", "a float over a period"),
    "ttextseq": Kind("a temporal text sequence", "a text over a period"),
    "tpointseq": Kind("a moving point sequence", "positions over a period (a trip)"),
    "tgeoseq": Kind("a temporal geometry sequence", "geometries over a period"),
    "tboolseqset": Kind("a temporal boolean sequence set", "true or false over several periods"),
    "tintseqset": Kind("a temporal integer sequence set", "an integer over several periods"),
    "tfloatseqset": Kind("a temporal float sequence set", "a float over several periods"),
    "ttextseqset": Kind("a temporal text sequence set", "a text over several periods"),
    "tpointseqset": Kind("a moving point sequence set", "positions over several periods"),
    # Time.
    "timestamptz": Kind("a timestamp", "a moment in time, a date and time"),
    "tstzset": Kind("a set of timestamps", "several moments in time"),
    "tstzspan": Kind("a period", "a time span, a time range or time interval between two "
                     "timestamps"),
    "tstzspanset": Kind("a set of periods", "several time spans, time ranges with gaps"),
    "date": Kind("a date", "a calendar day"),
    "dateset": Kind("a set of dates", "several days"),
    "datespan": Kind("a date span", "a range of days, from one date to another"),
    "datespanset": Kind("a set of date spans", "several ranges of days"),
    "interval": Kind("an interval", "a duration, a length of time such as 1 hour or 2 days"),
    # Numbers and text.
    "int": Kind("an integer", "a whole number"),
    "int32": Kind("an integer", "a whole number"),
    "int64": Kind("a big integer", "a 64-bit whole number"),
    "bigint": Kind("a big integer", "a 64-bit whole number"),
    "float": Kind("a float", "a number with decimals"),
    "float8": Kind("a float", "a number with decimals"),
    "double": Kind("a float", "a number with decimals"),
    "bool": Kind("a boolean", "true or false"),
    "text": Kind("a text", "a string"),
    "intset": Kind("a set of integers"), "bigintset": Kind("a set of big integers"),
    "floatset": Kind("a set of floats"), "textset": Kind("a set of texts", "several strings"),
    "intspan": Kind("an integer span", "a range of whole numbers"),
    "bigintspan": Kind("a big integer span", "a range of whole numbers"),
    "floatspan": Kind("a float span", "a range of numbers, from a lower to an upper bound"),
    "intspanset": Kind("a set of integer spans", "several ranges of whole numbers"),
    "bigintspanset": Kind("a set of big integer spans", "several ranges of whole numbers"),
    "floatspanset": Kind("a set of float spans", "several ranges of numbers"),
    "numspan": Kind("a number span", "a range of numbers"),
    "set": Kind("a set", "an ordered set of distinct values: numbers, dates, timestamps, texts "
                "or geometries"),
    "span": Kind("a span", "a range of values or times with a lower and an upper bound: a "
                 "number range, a date range or a period"),
    "spanset": Kind("a span set", "several ranges of values or times, with gaps"),
    "spans": Kind("spans", "ranges of values or times"),
    # Boxes.
    "stbox": Kind("a space-time box", "a spatiotemporal bounding box: x, y (and z) ranges and "
                  "a time range"),
    "stboxes": Kind("space-time boxes", "spatiotemporal bounding boxes"),
    "stboxarr": Kind("space-time boxes", "spatiotemporal bounding boxes"),
    "tbox": Kind("a temporal box", "a bounding box of a temporal number: a value range and a "
                 "time range"),
    "tboxes": Kind("temporal boxes", "value ranges with time ranges"),
    "tboxfloat": Kind("a float temporal box", "a float range and a time range"),
    "tboxint": Kind("an integer temporal box", "an integer range and a time range"),
    "tfloatbox": Kind("a float temporal box", "a float range and a time range"),
    "tintbox": Kind("an integer temporal box", "an integer range and a time range"),
    # Space.
    "geo": Kind("a geometry", "a static shape: a point, line or polygon, a location, area or "
                "region (WKT)"),
    "geom": Kind("a geometry", "a static shape: a point, line or polygon in planar coordinates"),
    "geog": Kind("a geography", "a shape on the earth in longitude and latitude"),
    "geoset": Kind("a set of geometries", "several points or shapes"),
    "spatialset": Kind("a set of geometries", "several points or shapes"),
    "geompoint": Kind("a point", "a location in planar coordinates"),
    "geogpoint": Kind("a geographic point", "a location in longitude and latitude"),
    "point": Kind("a point", "a location"),
    "line": Kind("a line", "a linestring, a path"),
    "geomeas": Kind("a geometry with measures", "a line whose M values are times"),
    "npoint": Kind("a network point", "a position on a route of a road network"),
    "npointset": Kind("a set of network points", "positions on a road network"),
    "nsegment": Kind("a network segment", "a part of a route of a road network"),
    "route": Kind("a route", "a road of the road network"),
    "ways": Kind("the road network", "its routes"),
}


def rank(type_name: str) -> int:
    """How specific a type is, for choosing which of two argument orders comes first: a
    temporal value (3), a set, span, span set, box or geometry (2), a single value (1)."""
    if type_name == "temporal" or (type_name.startswith("t") and type_name not in
                                   ("text", "textset", "timestamptz", "tstzset", "tstzspan",
                                    "tstzspanset", "tbox", "tboxes", "tboxfloat", "tboxint")):
        return 3
    if type_name.endswith(("set", "span", "spanset", "box", "boxes")) or type_name in (
            "stbox", "tbox", "geo", "geom", "geog", "nsegment"):
        return 2
    return 1


@dataclass(frozen=True)
class Op:
    """What a function does, as a template over the types it names ({a}, {b}: the first and
    second type, in the name's order), and the other words people use for it."""

    template: str
    synonyms: str = ""


_COMPARE = {
    "eq": ("equal to", "equals, is the same as, =="),
    "ne": ("not equal to", "differs from, is different, !="),
    "lt": ("less than", "smaller, lower, below, under, <"),
    "le": ("at most", "less than or equal to, <="),
    "gt": ("greater than", "larger, higher, above, over, exceeds, more than, >"),
    "ge": ("at least", "greater than or equal to, >="),
}

_POSITION = {
    "left": ("strictly to the left of", "smaller values, entirely below in x or value"),
    "right": ("strictly to the right of", "larger values, entirely above in x or value"),
    "overleft": ("not to the right of", "does not extend to the right of, ends before the end "
                 "of"),
    "overright": ("not to the left of", "does not extend to the left of, starts after the start "
                  "of"),
    "above": ("strictly above", "north of, larger y"),
    "below": ("strictly below", "south of, smaller y"),
    "overabove": ("not below", "does not extend below"),
    "overbelow": ("not above", "does not extend above"),
    "front": ("strictly in front of", "smaller z"),
    "back": ("strictly behind", "larger z"),
    "overfront": ("not behind", "does not extend behind"),
    "overback": ("not in front of", "does not extend in front of"),
    "before": ("strictly before", "earlier than, ends before the start of, precedes"),
    "after": ("strictly after", "later than, starts after the end of, follows"),
    "overbefore": ("not after", "does not extend after, ends no later than"),
    "overafter": ("not before", "does not extend before, starts no earlier than"),
}

_SPATIAL = {
    "intersects": ("intersects", "meets, crosses, touches or is inside, overlaps, enters, "
                   "inside, within"),
    "contains": ("contains", "holds, covers, the other is inside it"),
    "covers": ("covers", "contains, includes"),
    "disjoint": ("is disjoint from", "does not intersect, stays outside, away from, never "
                 "meets"),
    "touches": ("touches", "meets the boundary, reaches the border, edge"),
    "dwithin": ("is within a distance of", "near, close to, in range of, within meters, "
                "proximity, nearby"),
}

OPS: dict[str, Op] = {
    # Accessors of values.
    "max_value": Op("the maximum value of {a}", "max, largest, highest, greatest, biggest, peak, "
                    "top value"),
    "min_value": Op("the minimum value of {a}", "min, smallest, lowest, least, bottom value"),
    "start_value": Op("the first value of {a}", "start, initial, beginning, earliest value"),
    "end_value": Op("the last value of {a}", "end, final, latest, most recent, current value"),
    "value_n": Op("the n-th value of {a}", "value number n, value at a position, index"),
    "values": Op("the distinct values of {a}", "all values it takes, list of values"),
    "value_at_timestamptz": Op("the value of {a} at a timestamp", "value at a time, at a given "
                               "moment, where or what it was then, look up by time"),
    "avg_value": Op("the average value of {a}", "mean, average over the instants"),
    "twavg": Op("the time-weighted average of {a}", "mean over time, weighted by duration, "
                "average value"),
    "integral": Op("the integral of {a} over time", "area under the curve, sum over time"),
    "delta_value": Op("the difference between successive values of {a}", "change from one "
                      "instant to the next, increments, delta"),
    "valuespans": Op("the value ranges of {a}", "the spans of values it takes"),
    "scale_value": Op("{a} with its values scaled to a new width", "rescale, stretch values"),
    "shift_value": Op("{a} with its values shifted by an amount", "offset, add a constant to "
                      "the values, translate"),
    "shift_scale_value": Op("{a} with its values shifted and scaled", "offset and rescale the "
                            "values"),
    # Accessors of time.
    "duration": Op("the duration of {a}", "how long, length of time, time span, elapsed time"),
    "segm_duration": Op("the pieces of {a} lasting at least a duration", "segments longer than"),
    "start_timestamptz": Op("the start time of {a}", "first timestamp, when it begins, "
                            "beginning"),
    "end_timestamptz": Op("the end time of {a}", "last timestamp, when it ends, finish"),
    "timestamptz_n": Op("the n-th timestamp of {a}", "timestamp number n"),
    "timestamps": Op("the timestamps of {a}", "all times, list of moments, when it was "
                     "recorded"),
    "num_timestamps": Op("the number of timestamps of {a}", "how many times, count of moments"),
    "time": Op("the time of {a}, as a set of periods", "when it is defined, time extent, "
               "periods covered"),
    "lower": Op("the lower bound of {a}", "start, minimum, low end, from"),
    "upper": Op("the upper bound of {a}", "end, maximum, high end, to"),
    "lower_inc": Op("whether the lower bound of {a} is included", "closed or open start"),
    "upper_inc": Op("whether the upper bound of {a} is included", "closed or open end"),
    "width": Op("the width of {a}", "size, upper minus lower, extent, length of the range"),
    "start_instant": Op("the first instant of {a}", "start, first point and time"),
    "end_instant": Op("the last instant of {a}", "end, last point and time"),
    "instant_n": Op("the n-th instant of {a}", "instant number n"),
    "instants": Op("the instants of {a}", "all value-time pairs, samples, observations, "
                   "points"),
    "num_instants": Op("the number of instants of {a}", "how many instants, samples, points, "
                       "observations, count"),
    "max_instant": Op("the instant with the maximum value of {a}", "when the largest value "
                      "occurs, peak instant"),
    "min_instant": Op("the instant with the minimum value of {a}", "when the smallest value "
                      "occurs"),
    "start_sequence": Op("the first sequence of {a}", "first piece, first continuous part"),
    "end_sequence": Op("the last sequence of {a}", "last piece, last continuous part"),
    "sequence_n": Op("the n-th sequence of {a}", "sequence number n, piece n"),
    "sequences": Op("the sequences of {a}", "continuous pieces, parts between gaps"),
    "num_sequences": Op("the number of sequences of {a}", "how many pieces, continuous parts, "
                        "gaps plus one"),
    "segments": Op("the segments of {a}", "pieces between successive instants"),
    "interp": Op("the interpolation of {a}", "discrete, step or linear, how values between "
                 "instants are filled"),
    "set_interp": Op("{a} with another interpolation", "change to step, linear or discrete "
                     "interpolation, convert interpolation"),
    "subtype": Op("the subtype of {a}", "instant, sequence or sequence set, kind"),
    "after_timestamptz": Op("the part of {a} after a timestamp", "later than, from a time on, "
                            "since"),
    "before_timestamptz": Op("the part of {a} before a timestamp", "earlier than, until, up to "
                             "a time"),
    # Sets and spans.
    "num_values": Op("the number of values of {a}", "how many values, count, size, "
                     "cardinality"),
    "start_span": Op("the first span of {a}", "first range"),
    "end_span": Op("the last span of {a}", "last range"),
    "span_n": Op("the n-th span of {a}", "range number n"),
    "num_spans": Op("the number of spans of {a}", "how many ranges"),
    "span": Op("the span of {a}", "bounding range, from lowest to highest"),
    "spans": Op("the spans of {a}", "its ranges"),
    "dates": Op("the dates of {a}", "all days"),
    "start_date": Op("the first date of {a}", "first day"),
    "end_date": Op("the last date of {a}", "last day"),
    "date_n": Op("the n-th date of {a}", "day number n"),
    "num_dates": Op("the number of dates of {a}", "how many days"),
    "routes": Op("the routes of {a}", "which roads, road identifiers"),
    "route": Op("the route of {a}", "which road, road identifier"),
    "positions": Op("the network segments covered by {a}", "positions along routes"),
    "position": Op("the position of {a} along its route", "fraction of the route, offset, "
                   "where on the road"),
    "start_position": Op("the start position of {a} along its route", "fraction of the route"),
    "end_position": Op("the end position of {a} along its route", "fraction of the route"),
    "exists": Op("whether a route exists in the road network", "is there such a road"),
    # Moving points.
    "speed": Op("the speed of {a} over time", "velocity, how fast, pace, rate of movement, "
                "km/h, m/s"),
    "length": Op("the length of {a}", "total distance travelled, how far, distance covered, "
                 "path length, kilometres, metres, mileage"),
    "cumulative_length": Op("the distance covered so far by {a}, at each moment",
                            "cumulative length, running distance, running total of the distance, "
                            "distance travelled up to now, "
                            "odometer, how far it has gone so far, progress over time"),
    "trajectory": Op("the trajectory of {a} as a geometry", "path, route, track, line, trace, "
                     "linestring, where it went"),
    "twcentroid": Op("the time-weighted centroid of {a}", "average position weighted by time "
                     "spent, center, mean location"),
    "azimuth": Op("the heading of {a} over time", "azimuth, bearing, direction of travel, "
                  "course, orientation, angle, compass direction"),
    "direction": Op("the overall direction of {a}", "azimuth from start to end, bearing, "
                    "heading of the whole trip"),
    "angular_difference": Op("the change of angle of {a} between instants", "turning, "
                             "rotation, change of heading, angular difference"),
    "get_x": Op("the x coordinate of {a} over time", "longitude, easting, x value"),
    "get_y": Op("the y coordinate of {a} over time", "latitude, northing, y value"),
    "get_z": Op("the z coordinate of {a} over time", "altitude, elevation, height, depth"),
    "is_simple": Op("whether {a} never crosses itself", "self-intersection, loops, simple "
                    "path"),
    "make_simple": Op("{a} split into pieces that do not cross themselves", "remove loops, "
                      "self-intersections"),
    "traversed_area": Op("the area traversed by {a}", "swept area, footprint, region covered, "
                         "coverage"),
    "convex_hull": Op("the convex hull of {a}", "enclosing polygon, outline, envelope"),
    "centroid": Op("the centroid of {a}", "center, middle point, centre"),
    "stops": Op("the stops of {a}", "where and when it stood still, idle periods, dwell, "
                "parked, halted, stationary, paused"),
    "simplify_dp": Op("{a} simplified with Douglas-Peucker", "fewer points, reduce vertices, "
                      "generalize, compress, thin out the track"),
    "simplify_max_dist": Op("{a} simplified by a maximum distance", "fewer points, reduce, "
                            "generalize"),
    "simplify_min_dist": Op("{a} with instants closer than a distance removed", "fewer points, "
                            "thin out, reduce"),
    "simplify_min_tdelta": Op("{a} with instants closer in time than an interval removed",
                              "fewer points, thin out, reduce sampling"),
    "tsample": Op("{a} sampled at a regular time interval", "resample, every minute, regular "
                  "steps, downsample, fixed rate"),
    "srid": Op("the SRID of {a}", "spatial reference system, coordinate system, EPSG code, "
               "projection"),
    "set_srid": Op("{a} with its SRID set", "assign a spatial reference system, declare the "
                   "coordinate system, EPSG code"),
    "transform": Op("{a} transformed to another SRID", "reproject, coordinate system, EPSG"),
    # Restrictions.
    "at": Op("{a} restricted to {b}", "the part inside, keep only, within, clip, filter, "
             "limit to, intersect with, during, where it is in"),
    "minus": Op("{a} without {b}", "the part outside, remove the part inside, exclude, cut "
                "out, subtract, except, drop, difference, not in"),
    "at_value": Op("{a} restricted to a value", "when it equals a value, keep only that value"),
    "minus_value": Op("{a} without a value", "remove a value, when it differs from a value"),
    "at_values": Op("{a} restricted to a set of values", "keep only those values"),
    "minus_values": Op("{a} without a set of values", "remove those values"),
    "at_max": Op("{a} restricted to its maximum", "when it is at its largest, highest, peak"),
    "at_min": Op("{a} restricted to its minimum", "when it is at its smallest, lowest"),
    "minus_max": Op("{a} without its maximum", "remove the largest values, peaks"),
    "minus_min": Op("{a} without its minimum", "remove the smallest values"),
    "when_true": Op("the periods when {a} is true", "when it holds, time it was true"),
    # Maths.
    "derivative": Op("the derivative of {a}", "rate of change, slope, change per second, "
                     "gradient"),
    "abs": Op("the absolute value of {a}", "magnitude, without sign"),
    "trend": Op("the trend of {a}", "whether it increases, decreases or stays, going up or "
                "down"),
    "round": Op("{a} rounded to a number of decimals", "round, precision, digits"),
    "ceil": Op("{a} rounded up", "ceiling"),
    "floor": Op("{a} rounded down", "floor"),
    "degrees": Op("{a} converted from radians to degrees", "angle in degrees"),
    "radians": Op("{a} converted from degrees to radians", "angle in radians"),
    "exp": Op("the exponential of {a}", "e to the power"),
    "ln": Op("the natural logarithm of {a}", "log"),
    "log10": Op("the base-10 logarithm of {a}", "log"),
    "add": Op("{a} plus {b}", "add, sum, addition, increase by"),
    "sub": Op("{a} minus {b}", "subtract, difference, decrease by"),
    "mult": Op("{a} times {b}", "multiply, product, scale by a factor"),
    "mul": Op("{a} times {b}", "multiply, product"),
    "div": Op("{a} divided by {b}", "divide, quotient, ratio"),
    "textcat": Op("{a} joined with {b}", "concatenate, append text, combine strings"),
    "initcap": Op("{a} with each word capitalized", "title case"),
    "tnot": Op("the negation of {a}", "not, opposite, invert, flip"),
    "tand": Op("{a} and {b}, at each moment", "logical and, both true, conjunction"),
    "tor": Op("{a} or {b}, at each moment", "logical or, either true, disjunction"),
    # Time transformations.
    "shift_time": Op("{a} shifted in time", "move in time, offset timestamps, delay, earlier or "
                     "later by an interval"),
    "scale_time": Op("{a} with its time scaled to a duration", "stretch or compress the "
                     "timeline, rescale time"),
    "shift_scale_time": Op("{a} shifted and scaled in time", "move and stretch the timeline"),
    "shift": Op("{a} shifted by an amount", "move, offset"),
    "shift_scale": Op("{a} shifted and scaled", "move and stretch"),
    "scale": Op("{a} scaled by a factor", "resize, enlarge or shrink"),
    "expand": Op("{a} expanded by an amount", "enlarge, grow, widen, pad, buffer"),
    "expand_space": Op("{a} expanded in space by a distance", "enlarge, grow, pad"),
    "expand_time": Op("{a} expanded in time by an interval", "widen the time range"),
    "tprecision": Op("{a} truncated to a time precision", "round times to the hour, minute, "
                     "day, time bucket"),
    # Tiles and splits.
    "bins": Op("{a} split into bins of a given size", "buckets, intervals of fixed width, "
               "hourly, daily, per day, per hour, histogram, tiles"),
    "get_bin": Op("the bin of a given size that holds {a}", "bucket, interval of fixed width, "
                  "which hour or day"),
    "time_split": Op("{a} split into pieces by time bins", "daily, hourly, per day, per hour, "
                     "per week, chunks, partition by time, time buckets, tiles"),
    "time_bins": Op("the time bins that {a} covers", "daily, hourly, per day, buckets"),
    "value_split": Op("{a} split into pieces by value bins", "bands, buckets of values, "
                      "ranges of values, histogram, partition by value"),
    "value_time_split": Op("{a} split into pieces by value and time bins", "buckets of values "
                           "per hour or day, grid of value and time"),
    "value_bins": Op("the value bins that {a} covers", "bands, buckets of values"),
    "time_boxes": Op("the temporal boxes of {a} per time bin", "bounding box per hour or day"),
    "value_boxes": Op("the temporal boxes of {a} per value bin", "bounding box per value band"),
    "value_time_boxes": Op("the temporal boxes of {a} per value and time bin", "bounding box per "
                           "tile"),
    "time_tiles": Op("{a} split into time tiles", "per hour, per day, grid of time"),
    "value_tiles": Op("{a} split into value tiles", "grid of values"),
    "value_time_tiles": Op("{a} split into value and time tiles", "grid of value and time"),
    "space_tiles": Op("{a} split into a grid of spatial tiles", "grid cells, squares, raster, "
                      "partition space, 1 km boxes"),
    "space_time_tiles": Op("{a} split into a grid of space and time tiles", "grid cells per hour"
                           " or day, space-time cubes"),
    "get_space_tile": Op("the spatial tile of a grid that holds a point", "grid cell"),
    "get_time_tile": Op("the time tile that holds a timestamp", "time bucket"),
    "get_space_time_tile": Op("the space-time tile that holds a point and a time", "grid cell"),
    "space_split": Op("{a} split into pieces by a spatial grid", "cut by grid cells, tiles, "
                      "partition by space, squares"),
    "space_time_split": Op("{a} split into pieces by a space and time grid", "cut by grid "
                           "cells per hour or day"),
    "space_boxes": Op("the space-time boxes of {a} per spatial tile", "bounding box per cell"),
    "space_time_boxes": Op("the space-time boxes of {a} per space-time tile", "bounding box "
                           "per cell and time"),
    "quad_split": Op("{a} split into four quadrants", "quadtree"),
    "split_n_spans": Op("{a} split into n spans", "n pieces, chunks"),
    "split_each_n_spans": Op("{a} split into spans of n values each", "chunks of n"),
    "split_n_stboxes": Op("{a} split into n space-time boxes", "n bounding boxes, chunks"),
    "split_each_n_stboxes": Op("{a} split into space-time boxes of n segments each",
                               "bounding boxes per n points"),
    "split_n_tboxes": Op("{a} split into n temporal boxes", "n bounding boxes"),
    "split_each_n_tboxes": Op("{a} split into temporal boxes of n instants each",
                              "bounding boxes per n instants"),
    "stboxes": Op("the space-time boxes of the segments of {a}", "bounding box per segment"),
    "tboxes": Op("the temporal boxes of the segments of {a}", "bounding box per segment"),
    "area": Op("the area of {a}", "surface, size, square metres"),
    "perimeter": Op("the perimeter of {a}", "boundary length, circumference"),
    "volume": Op("the volume of {a}", "size in space and time"),
    "get_space": Op("{a} without its time dimension", "spatial part only"),
    # Box accessors.
    "xmin": Op("the minimum x of {a}", "lower x, west, lowest value"),
    "xmax": Op("the maximum x of {a}", "upper x, east, highest value"),
    "ymin": Op("the minimum y of {a}", "lower y, south"),
    "ymax": Op("the maximum y of {a}", "upper y, north"),
    "zmin": Op("the minimum z of {a}", "lowest altitude"),
    "zmax": Op("the maximum z of {a}", "highest altitude"),
    "xmin_inc": Op("whether the minimum x of {a} is included", ""),
    "xmax_inc": Op("whether the maximum x of {a} is included", ""),
    "tmin": Op("the start time of {a}", "earliest time, first timestamp"),
    "tmax": Op("the end time of {a}", "latest time, last timestamp"),
    "tmin_inc": Op("whether the start time of {a} is included", ""),
    "tmax_inc": Op("whether the end time of {a} is included", ""),
    "hasx": Op("whether {a} has a value or x dimension", ""),
    "hasz": Op("whether {a} has a z dimension", "3D, altitude"),
    "hast": Op("whether {a} has a time dimension", ""),
    "isgeodetic": Op("whether {a} is geodetic", "geography, longitude and latitude"),
    # Geometry operations.
    "buffer": Op("{a} buffered by a distance", "enlarge by a radius, zone around, surrounding "
                 "area"),
    "boundary": Op("the boundary of {a}", "border, outline, edge"),
    "unary_union": Op("the union of the parts of {a}", "merge, dissolve"),
    "intersection2d": Op("the intersection of {a} and {b}", "common part, overlap, clip"),
    "intersection2d_coll": Op("the intersection of {a} and {b}, as a collection",
                              "common part, overlap"),
    "difference2d": Op("{a} minus {b}", "difference, cut out, erase"),
    "distance2d": Op("the distance between {a} and {b}", "how far apart, separation"),
    "distance3d": Op("the 3D distance between {a} and {b}", "how far apart"),
    "dwithin2d": Op("whether {a} is within a distance of {b}", "near, close to"),
    "dwithin3d": Op("whether {a} is within a 3D distance of {b}", "near, close to"),
    "intersects2d": Op("whether {a} intersects {b}", "meets, crosses, overlaps"),
    "intersects3d": Op("whether {a} intersects {b} in 3D", "meets"),
    "disjoint2d": Op("whether {a} is disjoint from {b}", "apart, does not meet"),
    "shortestline2d": Op("the shortest line between {a} and {b}", "closest points, connector"),
    "shortestline3d": Op("the shortest 3D line between {a} and {b}", "closest points"),
    "equals": Op("whether {a} equals {b} spatially", "same shape"),
    "same": Op("whether {a} and {b} have the same bounding box", "equal extent"),
    "is_empty": Op("whether {a} is empty", "no points"),
    "is_unitary": Op("whether {a} is a single geometry", "not a collection"),
    "typename": Op("the type of {a}", "point, line or polygon, kind of shape"),
    "reverse": Op("{a} with its points in reverse order", "flip direction"),
    "points": Op("the points of {a}", "vertices, coordinates"),
    "pointarr": Op("the points of {a}, as an array", "vertices"),
    "num_points": Op("the number of points of {a}", "how many vertices"),
    "numpoints": Op("the number of points of {a}", "how many vertices"),
    "point_n": Op("the n-th point of {a}", "vertex number n"),
    "geo_n": Op("the n-th geometry of {a}", "part number n of a collection"),
    "num_geos": Op("the number of geometries of {a}", "how many parts"),
    "interpolate_point": Op("the point at a fraction along {a}", "position along the line, "
                            "point at a percentage of its length, locate along"),
    "locate_point": Op("the fraction along {a} closest to a point", "where along the line, "
                       "linear referencing, project onto the line"),
    "substring": Op("the part of {a} between two fractions", "sub-line, cut a piece of the "
                    "line"),
    "make2d": Op("a 2D point from coordinates", "x and y, longitude and latitude, create a "
                 "point"),
    "make3dz": Op("a 3D point from coordinates", "x, y and z, create a point with altitude"),
    # Distances.
    "distance": Op("the distance between {a} and {b}", "how far apart, gap, separation"),
    "tdistance": Op("the distance between {a} and {b} over time", "how far apart at each "
                    "moment, temporal distance, separation over time, proximity"),
    "nad": Op("the nearest approach distance of {a} and {b}", "smallest distance ever, closest "
              "they get, minimum distance, closest approach"),
    "nai": Op("the nearest approach instant of {a} to {b}", "when it is closest, the moment of "
              "closest approach, nearest point and time"),
    "shortestline": Op("the shortest line between {a} and {b}", "closest points, line of "
                       "nearest approach, connector"),
    "frechet_distance": Op("the discrete Frechet distance between {a} and {b}", "trajectory "
                           "similarity, how alike two paths are"),
    "hausdorff_distance": Op("the discrete Hausdorff distance between {a} and {b}",
                             "trajectory similarity, farthest mismatch"),
    "dyntimewarp_distance": Op("the dynamic time warping distance between {a} and {b}",
                               "DTW, time series similarity, how alike"),
    "bearing": Op("the bearing from {a} to {b}", "azimuth, heading, direction, compass angle "
                  "towards"),
    # Set operations.
    "union": Op("the union of {a} and {b}", "merge, combine, join, or"),
    "intersection": Op("the intersection of {a} and {b}", "common part, overlap, in both, "
                       "shared"),
    # Constructors and conversions.
    "to": Op("{a} converted to {b}", "convert, cast, as, turn into, change type"),
    "make": Op("{a} built from its parts", "create, construct, new, make from bounds"),
    "inst_make": Op("{a} built from a value and a timestamp", "create an instant, one "
                    "observation"),
    "from_base_temp": Op("{a} with a constant value over the time of another temporal value",
                         "constant, same time frame"),
    "from_base_tstzset": Op("{a} with a constant value at a set of timestamps", "constant, "
                            "repeat a value"),
    "from_base_tstzspan": Op("{a} with a constant value over a period", "constant, fixed value "
                             "during a time span"),
    "from_base_tstzspanset": Op("{a} with a constant value over a set of periods", "constant"),
    # Text forms.
    "out": Op("the text form of {a}", "print, to string, format, display, serialize, as text"),
    "as_text": Op("{a} as WKT text", "well-known text, to string, print"),
    "as_ewkt": Op("{a} as EWKT text", "extended well-known text with SRID, to string"),
    "as_hexwkb": Op("{a} as hex WKB", "binary, well-known binary in hexadecimal, serialize, "
                    "encode"),
    "as_hexewkb": Op("{a} as hex EWKB", "binary with SRID in hexadecimal, serialize"),
    "as_mfjson": Op("{a} as MF-JSON", "moving features JSON, export, serialize to JSON"),
    "as_geojson": Op("{a} as GeoJSON", "JSON, export, serialize"),
    "cmp": Op("the order of {a} and {b}: -1, 0 or 1", "compare, sort order"),
    # Temporal relationships.
    "adjacent": Op("whether {a} is adjacent to {b}", "touching, next to, right after, meets "
                   "without overlap"),
    "overlaps": Op("whether {a} overlaps {b}", "intersects, shares some part, in common, "
                   "coincides"),
    "contained": Op("whether {a} is contained in {b}", "inside, within, part of, included in, "
                    "subset"),
    "contains": Op("whether {a} contains {b}", "includes, holds, covers, has inside, superset"),
    "get_srid": Op("the SRID of the road network", "coordinate system of the routes"),
}

for _k, (_w, _s) in _COMPARE.items():
    OPS[_k] = Op("whether {a} is " + _w + " {b}", _s)
    OPS["ever_" + _k] = Op("whether {a} is ever " + _w + " {b}", "at some time, at least once, "
                           "sometimes, any moment, " + _s)
    OPS["always_" + _k] = Op("whether {a} is always " + _w + " {b}", "at all times, throughout, "
                             "the whole time, never otherwise, " + _s)
    OPS["t" + _k] = Op("when {a} is " + _w + " {b}, at each moment",
                       "over time, as a temporal boolean, the periods where, " + _s)
for _k, (_w, _s) in _POSITION.items():
    OPS[_k] = Op("whether {a} is " + _w + " {b}", "bounding-box position, " + _s)
for _k, (_w, _s) in _SPATIAL.items():
    OPS["e" + _k] = Op("whether {a} ever " + _w + " {b}", "at some time, at least once, "
                       "did it ever, " + _s)
    OPS["a" + _k] = Op("whether {a} always " + _w + " {b}", "at all times, throughout, "
                       "the whole time, " + _s)
    OPS["t" + _k] = Op("when {a} " + _w + " {b}, at each moment", "over time, as a temporal "
                       "boolean, the periods when, " + _s)
OPS["intersects"] = Op("whether {a} intersects {b}", "meets, crosses, overlaps")
OPS["covers"] = Op("whether {a} covers {b}", "contains, includes")
OPS["touches"] = Op("whether {a} touches {b}", "meets the boundary")
OPS["dwithin"] = Op("whether {a} is within a distance of {b}", "near, close to")

# Aggregate operations, for the tools that take many values at once.
AGGREGATES: dict[str, Op] = {
    "extent": Op("the extent of many {a}", "bounding box of all, overall range, envelope, "
                 "total extent"),
    "union": Op("the union of many {a}", "merge all, combine, dissolve"),
    "tcount": Op("how many of many {a} are defined at each moment", "temporal count, number "
                 "active over time, how many vehicles at once, occupancy"),
    "tmin": Op("the minimum of many {a} at each moment", "temporal minimum, lowest at each "
               "time, smallest"),
    "tmax": Op("the maximum of many {a} at each moment", "temporal maximum, highest at each "
               "time, largest, peak"),
    "tsum": Op("the sum of many {a} at each moment", "temporal sum, total over time, add up"),
    "tavg": Op("the average of many {a} at each moment", "temporal average, mean over time, "
               "fleet average"),
    "tand": Op("whether all of many {a} are true at each moment", "temporal and, all true"),
    "tor": Op("whether any of many {a} is true at each moment", "temporal or, any true"),
    "tcentroid": Op("the centroid of many {a} at each moment", "temporal centroid, average "
                    "position of a fleet, center over time"),
    "wmin": Op("the minimum of many {a} over a sliding time window", "window minimum, moving "
               "minimum, rolling min"),
    "wmax": Op("the maximum of many {a} over a sliding time window", "window maximum, moving "
               "maximum, rolling max"),
    "wsum": Op("the sum of many {a} over a sliding time window", "window sum, moving sum, "
               "rolling total"),
    "wavg": Op("the average of many {a} over a sliding time window", "window average, moving "
               "average, rolling mean, smoothing"),
}

# Each category in a sentence: what its tools answer.
CATEGORIES: dict[str, str] = {
    "accessors": "An accessor: reads a part or a property of a value.",
    "aggregates": "An aggregate: combines many values into one.",
    "arithmetic and maths": "Arithmetic and maths on values.",
    "bounding-box predicates": "A bounding-box predicate: compares the extents (bounding boxes) "
                               "of two values, answers true or false.",
    "comparisons": "A comparison of two whole values, answers true or false or an order.",
    "constructors": "A constructor: builds a value from its parts.",
    "conversions": "A conversion from one type to another.",
    "distances": "A distance between two values.",
    "ever/always predicates": "An ever or always predicate: whether something holds at some "
                              "time or at all times, true or false.",
    "input/output": "Input and output: the value's text or binary form.",
    "restrictions": "A restriction: keeps or removes part of a temporal value.",
    "set operations": "A set operation: union, intersection or difference.",
    "spatial relationships": "A spatial relationship over time: a temporal boolean saying when "
                             "it holds.",
    "temporal comparisons": "A comparison at each moment, as a temporal boolean.",
    "transformations": "A transformation: computes a new value from a value.",
}
