"""Tools, schemas, callbacks and a plugin for the travel desk spec (travel_desk.yaml).

Everything works offline: cities, climate, sights, timetables, fares and entry rules come from
the sample JSON files in `travel_tools/data/` (or from `TRAVEL_DESK_DATA_DIR` when set, to use
your own exports in the same format). Booking holds are kept in session state; nothing is
bought and no payment data is handled.
"""
